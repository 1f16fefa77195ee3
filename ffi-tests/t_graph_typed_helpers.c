/* Typed helpers: matmul + bias + relu, SDPA forward + backward; catalogue access; fused scalars
 * and ragged offsets; context data types. */
#include <stdlib.h>
#include <string.h>

#include "common.h"

int main(void) {
    const int64_t ad[3] = {1, 16, 32}, bd[3] = {1, 32, 8}, biasd[3] = {1, 1, 8};
    const int64_t qd[4] = {1, 4, 64, 32}, sd[4] = {1, 4, 64, 1}, one[4] = {1, 1, 1, 1};
    dnnp_graph_t *g = NULL;
    int64_t a, b, bias, c = -1, y = -1, r = -1, q, k, v, o = -1, st = -1, dq, dk, dv, dO, stats;
    int64_t scale, off, dims[4], ragged = 0;
    dnnp_data_type_t io = 0, inter = 0, comp = 0, dt = 0;
    size_t rank = 0, needed = 0;
    bool by_value = false;
    float value = 0.5f;
    char *catalogue;

    CHECK_OK(dnnp_graph_create(DNNP_DATA_TYPE_HALF, DNNP_DATA_TYPE_NOT_SET, DNNP_DATA_TYPE_FLOAT, &g));
    CHECK_OK(dnnp_graph_get_data_types(g, &io, &inter, &comp));
    CHECK_EQ_INT(io, DNNP_DATA_TYPE_HALF);
    CHECK_EQ_INT(inter, DNNP_DATA_TYPE_NOT_SET);
    CHECK_EQ_INT(comp, DNNP_DATA_TYPE_FLOAT);
    CHECK_STATUS(dnnp_graph_set_data_types(g, 999, 0, 0), DNNP_STATUS_BAD_PARAM);
    CHECK_OK(dnnp_graph_set_flag(g, DNNP_GRAPH_FLAG_CUDA_GRAPH_REPLAY_EXPECTED, true));
    CHECK_STATUS(dnnp_graph_set_flag(g, 17, true), DNNP_STATUS_BAD_PARAM);
    CHECK_OK(dnnp_graph_set_target(g, "mlp", 132, 90));
    CHECK_STATUS(dnnp_graph_set_target(g, NULL, 0, 90), DNNP_STATUS_BAD_PARAM);

    CHECK_OK(dnnp_graph_tensor_create(g, "A", DNNP_DATA_TYPE_HALF, 3, ad, NULL, -1, &a));
    CHECK_OK(dnnp_graph_tensor_create(g, "B", DNNP_DATA_TYPE_HALF, 3, bd, NULL, -1, &b));
    CHECK_OK(dnnp_graph_tensor_create(g, "bias", DNNP_DATA_TYPE_HALF, 3, biasd, NULL, -1, &bias));
    CHECK_OK(dnnp_graph_matmul(g, a, b, DNNP_DATA_TYPE_FLOAT, "mm", &c));
    CHECK_OK(dnnp_graph_pointwise(g, "bias", c, bias, -1, DNNP_DATA_TYPE_NOT_SET, NULL, &y));
    CHECK_OK(dnnp_graph_pointwise(g, "relu", y, -1, -1, DNNP_DATA_TYPE_NOT_SET, NULL, &r));
    CHECK_STATUS(dnnp_graph_pointwise(g, "relu", y, y, -1, 0, NULL, &r), DNNP_STATUS_BAD_PARAM);
    CHECK_STATUS(dnnp_graph_pointwise(g, "matmul", y, y, -1, 0, NULL, &r), DNNP_STATUS_BAD_PARAM);
    CHECK_STATUS(dnnp_graph_pointwise(g, "relu", y, -1, -1, 0, NULL, NULL), DNNP_STATUS_NULL_PARAMETER);
    CHECK_LAST_ERROR_CONTAINS("out");
    CHECK_OK(dnnp_graph_tensor_set_virtual(g, r, false));
    CHECK_OK(dnnp_graph_validate(g));
    CHECK_OK(dnnp_graph_tensor_get(g, r, &dt, &rank, dims, NULL, 4, NULL, NULL, NULL));
    CHECK_EQ_SIZE(rank, 3);
    CHECK_EQ_INT(dims[1], 16);
    CHECK_EQ_INT(dims[2], 8);
    CHECK_EQ_INT(dt, DNNP_DATA_TYPE_HALF);
    CHECK_OK(dnnp_graph_tensor_get(g, c, &dt, &rank, NULL, NULL, 0, NULL, NULL, NULL));
    CHECK_EQ_INT(dt, DNNP_DATA_TYPE_HALF); /* virtual: intermediate unset -> io */
    catalogue = (char *)malloc(8192);
    CHECK(catalogue != NULL);
    CHECK_OK(dnnp_graph_to_json(g, catalogue, 8192, NULL));
    CHECK_STR_CONTAINS(catalogue, "\"is_cuda_graph_replay_expected\": true");
    CHECK_STR_CONTAINS(catalogue, "\"sm_count\": 132");
    free(catalogue);
    dnnp_graph_destroy(g);

    /* SDPA forward + backward with a fused scale tensor and ragged offsets on q. */
    CHECK_OK(dnnp_graph_create(DNNP_DATA_TYPE_BFLOAT16, DNNP_DATA_TYPE_FLOAT, DNNP_DATA_TYPE_FLOAT, &g));
    CHECK_OK(dnnp_graph_tensor_create(g, "q", DNNP_DATA_TYPE_BFLOAT16, 4, qd, NULL, 10, &q));
    CHECK_OK(dnnp_graph_tensor_create(g, "k", DNNP_DATA_TYPE_BFLOAT16, 4, qd, NULL, 11, &k));
    CHECK_OK(dnnp_graph_tensor_create(g, "v", DNNP_DATA_TYPE_BFLOAT16, 4, qd, NULL, 12, &v));
    CHECK_OK(dnnp_graph_sdpa(g, q, k, v, 0.125, true, true, "fwd", &o, &st));
    CHECK(o > 0 && st > 0);
    CHECK_OK(dnnp_graph_tensor_create(g, "dO", DNNP_DATA_TYPE_BFLOAT16, 4, qd, NULL, -1, &dO));
    CHECK_OK(dnnp_graph_tensor_create(g, "stats", DNNP_DATA_TYPE_FLOAT, 4, sd, NULL, -1, &stats));
    CHECK_OK(dnnp_graph_sdpa_backward(g, q, k, v, o, dO, stats, 0.125, true, "bwd", &dq, &dk, &dv));
    CHECK_OK(dnnp_graph_validate(g));
    CHECK_OK(dnnp_graph_tensor_get(g, dq, &dt, &rank, dims, NULL, 4, NULL, NULL, NULL));
    CHECK_EQ_INT(dims[2], 64);
    CHECK_EQ_INT(dt, DNNP_DATA_TYPE_BFLOAT16);
    /* Inference-only forward: no Stats. */
    CHECK_OK(dnnp_graph_sdpa(g, q, k, v, 0.0, false, false, NULL, &o, &st));
    CHECK_EQ_INT(st, -1);

    /* Fused scalar and ragged offset setters. */
    CHECK_OK(dnnp_graph_tensor_create(g, "scale", DNNP_DATA_TYPE_FLOAT, 4, one, NULL, -1, &scale));
    CHECK_OK(dnnp_graph_tensor_set_pass_by_value(g, scale, &value));
    CHECK_OK(dnnp_graph_tensor_get(g, scale, NULL, &rank, NULL, NULL, 0, NULL, &by_value, NULL));
    CHECK(by_value);
    CHECK_OK(dnnp_graph_tensor_create(g, "q_off", DNNP_DATA_TYPE_INT32, 4, (const int64_t[]){2, 1, 1, 1}, NULL, -1, &off));
    CHECK_OK(dnnp_graph_tensor_set_ragged_offset(g, q, off, 1));
    CHECK_OK(dnnp_graph_tensor_get(g, q, NULL, &rank, NULL, NULL, 0, NULL, NULL, &ragged));
    CHECK_EQ_INT(ragged, off);
    CHECK_STATUS(dnnp_graph_tensor_set_ragged_offset(g, q, 12345, 1), DNNP_STATUS_BAD_PARAM);
    CHECK_OK(dnnp_graph_tensor_set_reordering(g, scale, DNNP_REORDERING_F8_128X4));
    CHECK_STATUS(dnnp_graph_tensor_set_reordering(g, scale, 9), DNNP_STATUS_BAD_PARAM);
    CHECK_OK(dnnp_graph_tensor_set_uid(g, scale, 77));
    CHECK_OK(dnnp_graph_tensor_set_uid(g, 77, 77));
    CHECK_STATUS(dnnp_graph_tensor_set_uid(g, 77, 10), DNNP_STATUS_BAD_PARAM);
    CHECK_STATUS(dnnp_graph_tensor_get(g, 4242, NULL, &rank, NULL, NULL, 0, NULL, NULL, NULL),
                 DNNP_STATUS_NOT_FOUND);
    dnnp_graph_destroy(g);

    /* The catalogue. */
    CHECK_STATUS(dnnp_op_catalogue_json(NULL, 0, &needed), DNNP_STATUS_BUFFER_TOO_SMALL);
    catalogue = (char *)malloc(needed);
    CHECK(catalogue != NULL);
    CHECK_OK(dnnp_op_catalogue_json(catalogue, needed, NULL));
    CHECK_STR_CONTAINS(catalogue, "\"name\":\"sdpa_mxfp8_backward\"");
    CHECK_STR_CONTAINS(catalogue, "\"name\":\"gdp_summary_bwd\"");
    CHECK_STR_CONTAINS(catalogue, "\"pointwise_mode\":\"GELU_APPROX_TANH_BWD\"");
    free(catalogue);
    CHECK_STATUS(dnnp_graph_create(0, 0, 0, NULL), DNNP_STATUS_NULL_PARAMETER);
    return 0;
}
