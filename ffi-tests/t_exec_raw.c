/* Execute with raw pointers: ordered, by uid, at an index, with overrides; operand introspection;
 * and every refusal of the raw forms (NULL arguments, counts, duplicates, non-operands, holes the
 * plan needs, negative/out-of-range/unbuilt indices, workspace). The recording test engine reads
 * a tag at operand 0 and writes tag+i and the operand's element count into operand i (host
 * buffers). */
#include <stdint.h>

#include "common.h"

#define N 4

static uint64_t bufs[N][2];

static void reset(uint64_t tag) {
    memset(bufs, 0, sizeof bufs);
    bufs[0][0] = tag;
}

int main(void) {
    dnnp_plan_list_t *list = NULL;
    dnnp_handle_t *h = NULL;
    void *ptrs[N];
    int64_t uids[N];
    size_t count = 0, needed = 0;
    int i;

    CHECK_OK(dnnp_debug_plan_list_create_exec_test(DNNP_EXEC_TEST_ENGINE_RECORDING, N, &list));
    CHECK_OK(dnnp_handle_create(NULL, &h));
    for (i = 0; i < N; i++) {
        ptrs[i] = bufs[i];
    }

    /* Operand order: ascending uids 1..N. */
    CHECK_OK(dnnp_plan_list_get_operand_count(list, &count));
    CHECK_EQ_SIZE(count, N);
    CHECK_STATUS(dnnp_plan_list_get_operand_uids(list, uids, 2, &needed), DNNP_STATUS_BUFFER_TOO_SMALL);
    CHECK_EQ_SIZE(needed, N);
    CHECK_OK(dnnp_plan_list_get_operand_uids(list, uids, N, &needed));
    for (i = 0; i < N; i++) {
        CHECK_EQ_INT(uids[i], i + 1);
    }

    /* Ordered raw pointers: bare addresses lend the declaration [1,128,64]. */
    reset(1000);
    CHECK_OK(dnnp_plan_list_execute(list, h, ptrs, N, NULL, DNNP_WORKSPACE_SIZE_UNKNOWN, NULL, 0));
    for (i = 1; i < N; i++) {
        CHECK_EQ_INT(bufs[i][0], 1000 + i);
        CHECK_EQ_INT(bufs[i][1], 128 * 64);
    }

    /* By uid, any order. */
    {
        int64_t u[N] = {3, 1, 4, 2};
        void *p[N] = {bufs[2], bufs[0], bufs[3], bufs[1]};
        reset(2000);
        CHECK_OK(dnnp_plan_list_execute_by_uid(list, h, u, p, N, NULL, 0, NULL, 0));
        for (i = 1; i < N; i++) {
            CHECK_EQ_INT(bufs[i][0], 2000 + i);
        }
    }

    /* At index 0 (the only entry), selection unchanged. */
    reset(3000);
    CHECK_OK(dnnp_plan_list_execute_plan_at_index(list, h, 0, ptrs, N, NULL, 0, NULL, 0));
    CHECK_EQ_INT(bufs[N - 1][0], 3000 + N - 1);

    /* Overrides: operand uid 3 runs as [1,32,64]; the plan sees 2048 elements there. */
    {
        int64_t dims[3] = {1, 32, 64};
        int64_t strides[3] = {2048, 64, 1};
        dnnp_shape_override ov = {3, 3, dims, strides};
        reset(4000);
        CHECK_OK(dnnp_plan_list_execute(list, h, ptrs, N, NULL, 0, &ov, 1));
        CHECK_EQ_INT(bufs[2][1], 32 * 64);
        CHECK_EQ_INT(bufs[1][1], 128 * 64);

        /* Override refusals. */
        ov.uid = 99;
        CHECK_STATUS(dnnp_plan_list_execute(list, h, ptrs, N, NULL, 0, &ov, 1), DNNP_STATUS_BAD_PARAM);
        CHECK_LAST_ERROR_CONTAINS("override_uids names tensor uid 99, which is not an operand");
        {
            dnnp_shape_override two[2] = {{2, 3, dims, strides}, {2, 3, dims, strides}};
            CHECK_STATUS(dnnp_plan_list_execute(list, h, ptrs, N, NULL, 0, two, 2), DNNP_STATUS_BAD_PARAM);
            CHECK_LAST_ERROR_CONTAINS("overridden twice");
        }
        {
            int64_t neg[3] = {1, -32, 64};
            dnnp_shape_override bad = {2, 3, neg, strides};
            CHECK_STATUS(dnnp_plan_list_execute(list, h, ptrs, N, NULL, 0, &bad, 1), DNNP_STATUS_BAD_PARAM);
            CHECK_LAST_ERROR_CONTAINS("nonnegative");
        }
        {
            dnnp_shape_override nodims = {2, 3, NULL, strides};
            CHECK_STATUS(dnnp_plan_list_execute(list, h, ptrs, N, NULL, 0, &nodims, 1),
                         DNNP_STATUS_NULL_PARAMETER);
            CHECK_LAST_ERROR_CONTAINS("overrides[].dims");
        }
        CHECK_STATUS(dnnp_plan_list_execute(list, h, ptrs, N, NULL, 0, NULL, 1), DNNP_STATUS_NULL_PARAMETER);
        CHECK_LAST_ERROR_CONTAINS("overrides");
    }

    /* Refusals: nothing is written on any of them. */
    reset(5000);
    CHECK_STATUS(dnnp_plan_list_execute(NULL, h, ptrs, N, NULL, 0, NULL, 0), DNNP_STATUS_NULL_PARAMETER);
    CHECK_LAST_ERROR_CONTAINS("list");
    CHECK_STATUS(dnnp_plan_list_execute(list, NULL, ptrs, N, NULL, 0, NULL, 0), DNNP_STATUS_NULL_PARAMETER);
    CHECK_LAST_ERROR_CONTAINS("handle");
    CHECK_STATUS(dnnp_plan_list_execute(list, h, NULL, N, NULL, 0, NULL, 0), DNNP_STATUS_NULL_PARAMETER);
    CHECK_LAST_ERROR_CONTAINS("device_ptrs");
    CHECK_STATUS(dnnp_plan_list_execute(list, h, ptrs, N - 1, NULL, 0, NULL, 0), DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("the graph has 4 operands");
    {
        void *hole[N] = {bufs[0], NULL, bufs[2], bufs[3]};
        CHECK_STATUS(dnnp_plan_list_execute(list, h, hole, N, NULL, 0, NULL, 0), DNNP_STATUS_BAD_PARAM);
        CHECK_LAST_ERROR_CONTAINS("operand tensor uid 2 ('y1')");
        CHECK_LAST_ERROR_CONTAINS("requires a buffer");
    }
    {
        int64_t dup[2] = {1, 1};
        CHECK_STATUS(dnnp_plan_list_execute_by_uid(list, h, dup, ptrs, 2, NULL, 0, NULL, 0), DNNP_STATUS_BAD_PARAM);
        CHECK_LAST_ERROR_CONTAINS("Duplicate tensor uid 1");
        int64_t alien[1] = {42};
        CHECK_STATUS(dnnp_plan_list_execute_by_uid(list, h, alien, ptrs, 1, NULL, 0, NULL, 0), DNNP_STATUS_BAD_PARAM);
        CHECK_LAST_ERROR_CONTAINS("tensor uid 42 is not an operand of this graph");
        CHECK_STATUS(dnnp_plan_list_execute_by_uid(list, h, NULL, ptrs, 1, NULL, 0, NULL, 0), DNNP_STATUS_NULL_PARAMETER);
        CHECK_LAST_ERROR_CONTAINS("uids");
    }
    CHECK_STATUS(dnnp_plan_list_execute_plan_at_index(list, h, -1, ptrs, N, NULL, 0, NULL, 0), DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("negative");
    CHECK_STATUS(dnnp_plan_list_execute_plan_at_index(list, h, 5, ptrs, N, NULL, 0, NULL, 0), DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("index 5 is out of range");
    for (i = 1; i < N; i++) {
        CHECK_EQ_INT(bufs[i][0], 0);
    }

    /* Operand introspection refusals. */
    CHECK_STATUS(dnnp_plan_list_get_operand_count(list, NULL), DNNP_STATUS_NULL_PARAMETER);
    CHECK_STATUS(dnnp_plan_list_get_operand_count(NULL, &count), DNNP_STATUS_NULL_PARAMETER);
    CHECK_STATUS(dnnp_plan_list_get_operand_uids(list, NULL, 0, NULL), DNNP_STATUS_NULL_PARAMETER);

    /* Test hook refusals. */
    {
        dnnp_plan_list_t *other = NULL;
        CHECK_STATUS(dnnp_debug_plan_list_create_exec_test(7, 4, &other), DNNP_STATUS_BAD_PARAM);
        CHECK_LAST_ERROR_CONTAINS("engine");
        CHECK_STATUS(dnnp_debug_plan_list_create_exec_test(DNNP_EXEC_TEST_ENGINE_NOOP, 0, &other),
                     DNNP_STATUS_BAD_PARAM);
        CHECK(other == NULL);
    }

    dnnp_plan_list_destroy(list);
    dnnp_handle_destroy(h);
    return 0;
}
