/* Execute with DLPack records: ordered, by uid, at an index; the normalization rules as a caller
 * sees them (declared extents, a 2-D matrix and a raw byte blob re-described from the graph, a
 * pitched view, byte_offset, NULL strides) and every DLPack refusal (too small, another dtype, a
 * transposed view, bad ndim, NULL shape, negative strides, NULL records, counts). Declarations:
 * uids 1..3, [1,128,64] bf16 with strides [8192,64,1]. The recording engine writes tag+i and the
 * element count it saw into operand i. */
#include <stdint.h>

#include "common.h"

#define N 3
#define ELEMS (128 * 64)

static uint16_t mem[N][2 * ELEMS]; /* room for a pitched view */
static int64_t shape3[3] = {1, 128, 64};

static dnnp_dltensor tensor(void *data, int32_t ndim, int64_t *shape, int64_t *strides, uint8_t code,
                            uint8_t bits) {
    dnnp_dltensor t;
    memset(&t, 0, sizeof t);
    t.data = data;
    t.device.device_type = 2; /* kDLCUDA */
    t.device.device_id = 0;
    t.ndim = ndim;
    t.dtype.code = code;
    t.dtype.bits = bits;
    t.dtype.lanes = 1;
    t.shape = shape;
    t.strides = strides;
    t.byte_offset = 0;
    return t;
}

static uint64_t word(int slot, int k) {
    uint64_t v;
    memcpy(&v, (const char *)mem[slot] + 8 * k, sizeof v);
    return v;
}

static void reset(uint64_t tag) {
    memset(mem, 0, sizeof mem);
    memcpy(mem[0], &tag, sizeof tag);
}

int main(void) {
    dnnp_plan_list_t *list = NULL;
    dnnp_handle_t *h = NULL;
    dnnp_dltensor t[N];
    const dnnp_dltensor *tp[N];
    int i;

    CHECK(sizeof(dnnp_dltensor) == 48);
    CHECK_OK(dnnp_debug_plan_list_create_exec_test(DNNP_EXEC_TEST_ENGINE_RECORDING, N, &list));
    CHECK_OK(dnnp_handle_create(NULL, &h));
    for (i = 0; i < N; i++) {
        t[i] = tensor(mem[i], 3, shape3, NULL, 4 /* bfloat */, 16);
        tp[i] = &t[i];
    }

    /* Declared extents, strides absent (row-major). */
    reset(100);
    CHECK_OK(dnnp_plan_list_execute_dlpack(list, h, tp, N, NULL, DNNP_WORKSPACE_SIZE_UNKNOWN, NULL, 0));
    CHECK_EQ_INT(word(1, 0), 101);
    CHECK_EQ_INT(word(2, 0), 102);
    CHECK_EQ_INT(word(2, 1), ELEMS);

    /* A 2-D matrix and a uint8 blob covering the declared bytes are read as the declaration. */
    {
        int64_t mat[2] = {128, 64};
        int64_t blob[1] = {2 * ELEMS};
        t[1] = tensor(mem[1], 2, mat, NULL, 4, 16);
        t[2] = tensor(mem[2], 1, blob, NULL, 1 /* uint */, 8);
        reset(200);
        CHECK_OK(dnnp_plan_list_execute_dlpack(list, h, tp, N, NULL, 0, NULL, 0));
        CHECK_EQ_INT(word(1, 1), ELEMS);
        CHECK_EQ_INT(word(2, 1), ELEMS);
    }

    /* A pitched view keeps its strides; fp16 of the same width reads as the declared bf16. */
    {
        int64_t pitched[3] = {2 * ELEMS, 128, 1};
        t[1] = tensor(mem[1], 3, shape3, pitched, 4, 16);
        t[2] = tensor(mem[2], 3, shape3, NULL, 2 /* float */, 16);
        reset(300);
        CHECK_OK(dnnp_plan_list_execute_dlpack(list, h, tp, N, NULL, 0, NULL, 0));
        CHECK_EQ_INT(word(1, 0), 301);
        CHECK_EQ_INT(word(2, 0), 302);
    }

    /* byte_offset is honoured. */
    t[1] = tensor((char *)mem[1] - 64, 3, shape3, NULL, 4, 16);
    t[1].byte_offset = 64;
    t[2] = tensor(mem[2], 3, shape3, NULL, 4, 16);
    reset(400);
    CHECK_OK(dnnp_plan_list_execute_dlpack(list, h, tp, N, NULL, 0, NULL, 0));
    CHECK_EQ_INT(word(1, 0), 401);
    t[1] = tensor(mem[1], 3, shape3, NULL, 4, 16);

    /* By uid, any order; at an index. */
    {
        int64_t u[N] = {2, 3, 1};
        const dnnp_dltensor *p[N] = {&t[1], &t[2], &t[0]};
        reset(500);
        CHECK_OK(dnnp_plan_list_execute_dlpack_by_uid(list, h, u, p, N, NULL, 0, NULL, 0));
        CHECK_EQ_INT(word(2, 0), 502);
        reset(600);
        CHECK_OK(dnnp_plan_list_execute_dlpack_plan_at_index(list, h, 0, tp, N, NULL, 0, NULL, 0));
        CHECK_EQ_INT(word(2, 0), 602);
        p[0] = NULL;
        CHECK_STATUS(dnnp_plan_list_execute_dlpack_by_uid(list, h, u, p, N, NULL, 0, NULL, 0),
                     DNNP_STATUS_NULL_PARAMETER);
        CHECK_LAST_ERROR_CONTAINS("tensors[]");
    }

    /* Refusals: none writes anything. */
    reset(700);
    {
        int64_t small[2] = {64, 64};
        t[1] = tensor(mem[1], 2, small, NULL, 4, 16);
        CHECK_STATUS(dnnp_plan_list_execute_dlpack(list, h, tp, N, NULL, 0, NULL, 0), DNNP_STATUS_BAD_PARAM);
        CHECK_LAST_ERROR_CONTAINS("operand tensor uid 2 ('y1')");
        CHECK_LAST_ERROR_CONTAINS("declared extent [1, 128, 64]");
        CHECK_LAST_ERROR_CONTAINS("[64, 64]");
    }
    {
        int64_t transposed_shape[3] = {1, 64, 128};
        int64_t transposed[3] = {ELEMS, 1, 64};
        t[1] = tensor(mem[1], 3, transposed_shape, transposed, 4, 16);
        CHECK_STATUS(dnnp_plan_list_execute_dlpack(list, h, tp, N, NULL, 0, NULL, 0), DNNP_STATUS_BAD_PARAM);
        CHECK_LAST_ERROR_CONTAINS("operand tensor uid 2 ('y1')");
    }
    t[1] = tensor(mem[1], 3, shape3, NULL, 2, 32); /* fp32: other width, keeps its dtype */
    CHECK_STATUS(dnnp_plan_list_execute_dlpack(list, h, tp, N, NULL, 0, NULL, 0), DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("needs dtype bfloat16 but the buffer is float32");
    t[1] = tensor(mem[1], 9, shape3, NULL, 4, 16);
    CHECK_STATUS(dnnp_plan_list_execute_dlpack(list, h, tp, N, NULL, 0, NULL, 0), DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("ndim 9");
    t[1] = tensor(mem[1], 3, NULL, NULL, 4, 16);
    CHECK_STATUS(dnnp_plan_list_execute_dlpack(list, h, tp, N, NULL, 0, NULL, 0), DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("shape is NULL");
    {
        int64_t neg[3] = {ELEMS, -64, 1};
        t[1] = tensor(mem[1], 3, shape3, neg, 4, 16);
        CHECK_STATUS(dnnp_plan_list_execute_dlpack(list, h, tp, N, NULL, 0, NULL, 0), DNNP_STATUS_BAD_PARAM);
        CHECK_LAST_ERROR_CONTAINS("nonnegative");
    }
    t[1] = tensor(mem[1], 3, shape3, NULL, 4, 16);
    CHECK_STATUS(dnnp_plan_list_execute_dlpack(list, h, tp, N - 1, NULL, 0, NULL, 0), DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("3 operands");
    CHECK_STATUS(dnnp_plan_list_execute_dlpack(list, h, NULL, N, NULL, 0, NULL, 0), DNNP_STATUS_NULL_PARAMETER);
    CHECK_LAST_ERROR_CONTAINS("tensors");
    tp[1] = NULL; /* a hole the plan requires */
    CHECK_STATUS(dnnp_plan_list_execute_dlpack(list, h, tp, N, NULL, 0, NULL, 0), DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("requires a buffer");
    CHECK_EQ_INT(word(1, 0), 0);
    CHECK_EQ_INT(word(2, 0), 0);

    dnnp_plan_list_destroy(list);
    dnnp_handle_destroy(h);
    return 0;
}
