/* Builds GDN forward and backward graphs with the generic builder and the typed helpers, and
 * reads them back: conditional outputs, inferred shapes, python-only op kinds, the uid rules and
 * validation messages of the linear-attention analyzer rules. */
#include <string.h>

#include "common.h"

#define T 64
#define H 4
#define K 32
#define V 16
#define N 2

static int64_t tensor(dnnp_graph_t *g, const char *name, dnnp_data_type_t dt, size_t rank,
                      const int64_t *dims, int64_t uid) {
    int64_t out = -2;
    CHECK_OK(dnnp_graph_tensor_create(g, name, dt, rank, dims, NULL, uid, &out));
    return out;
}

static void check_dims(dnnp_graph_t *g, int64_t uid, size_t rank, const int64_t *want) {
    int64_t dims[8];
    size_t r = 0, i;
    CHECK_OK(dnnp_graph_tensor_get(g, uid, NULL, &r, dims, NULL, 8, NULL, NULL, NULL));
    CHECK_EQ_SIZE(r, rank);
    for (i = 0; i < rank; ++i) {
        CHECK_EQ_INT(dims[i], want[i]);
    }
}

/* A `gdn` builder with the six inputs every GDN node binds: q, k, v, g, beta, cu_seqlens. */
static dnnp_op_builder_t *begin_gdn(const int64_t in[6]) {
    static const char *const ports[6] = {"q", "k", "v", "g", "beta", "cu_seqlens"};
    dnnp_op_builder_t *b = NULL;
    size_t i;
    CHECK_OK(dnnp_op_builder_begin("gdn", &b));
    for (i = 0; i < 6; ++i) {
        CHECK_OK(dnnp_op_builder_set_input(b, ports[i], in[i]));
    }
    return b;
}

int main(void) {
    const int64_t qd[3] = {T, H, K}, vd[3] = {T, H, V}, gd[2] = {T, H}, cu[1] = {N + 1};
    const int64_t state[4] = {N, H, V, K}, ck[4] = {T / 32 + N, H, V, K};
    dnnp_graph_t *g = NULL, *gb = NULL;
    dnnp_op_builder_t *b = NULL;
    int64_t q, k, v, gate, beta, cus, o = -1, fin = -1, ckp = -1, init;
    int64_t d_o, dq = -1, dk = -1, dv = -1, dg = -1, dbeta = -1, dinit = -1, other;
    size_t node = 0;
    uint32_t kind = 0, gdn_kind = 0;
    char name[64];

    /* Forward with the generic builder: final state and checkpoints requested. */
    CHECK_OK(dnnp_graph_create(DNNP_DATA_TYPE_BFLOAT16, DNNP_DATA_TYPE_FLOAT, DNNP_DATA_TYPE_FLOAT, &g));
    q = tensor(g, "q", DNNP_DATA_TYPE_BFLOAT16, 3, qd, -1);
    k = tensor(g, "k", DNNP_DATA_TYPE_BFLOAT16, 3, qd, -1);
    v = tensor(g, "v", DNNP_DATA_TYPE_BFLOAT16, 3, vd, -1);
    gate = tensor(g, "g", DNNP_DATA_TYPE_FLOAT, 2, gd, -1);
    beta = tensor(g, "beta", DNNP_DATA_TYPE_FLOAT, 2, gd, -1);
    cus = tensor(g, "cu_seqlens", DNNP_DATA_TYPE_INT32, 1, cu, 100);
    CHECK_EQ_INT(cus, 100);
    b = begin_gdn((const int64_t[6]){q, k, v, gate, beta, cus});
    CHECK_OK(dnnp_op_builder_set_attr_bool(b, "output_final_state", true));
    CHECK_OK(dnnp_op_builder_set_attr_int(b, "checkpoint_every_n_tokens", 32));
    CHECK_OK(dnnp_op_builder_set_attr_int(b, "scale", 1)); /* int accepted by a float attribute */
    CHECK_OK(dnnp_op_builder_set_attr_string(b, "gate_domain", "log"));
    CHECK_OK(dnnp_op_builder_finish(b, g, &node));
    CHECK_OK(dnnp_op_builder_output_uid(b, "O", &o));
    CHECK_OK(dnnp_op_builder_output_uid(b, "final_state", &fin));
    CHECK_OK(dnnp_op_builder_output_uid(b, "state_checkpoints", &ckp));
    dnnp_op_builder_destroy(b);
    CHECK_OK(dnnp_graph_validate(g));
    check_dims(g, o, 3, vd);
    check_dims(g, fin, 4, state);
    check_dims(g, ckp, 4, ck);
    CHECK_OK(dnnp_graph_node_op_kind(g, 0, &kind));
    CHECK_OK(dnnp_op_kind_from_name("gdn", &gdn_kind));
    CHECK_EQ_INT(kind, gdn_kind);

    /* A caller uid equal to an automatic one renumbers the holder; two caller uids collide. */
    other = tensor(g, "other", DNNP_DATA_TYPE_FLOAT, 2, gd, q);
    CHECK_EQ_INT(other, q);
    CHECK_OK(dnnp_graph_node_port_uid(g, 0, "q", &dq));
    CHECK(dq != q);
    CHECK_STATUS(dnnp_graph_tensor_create(g, "again", DNNP_DATA_TYPE_FLOAT, 2, gd, NULL, 100, &other),
                 DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("`again`");
    CHECK_LAST_ERROR_CONTAINS("`cu_seqlens`");

    /* Analyzer rule: a_log needs safe_gate. */
    b = begin_gdn((const int64_t[6]){dq, k, v, gate, beta, cus});
    CHECK_OK(dnnp_op_builder_set_input(b, "a_log", tensor(g, "a_log", DNNP_DATA_TYPE_FLOAT, 1, (const int64_t[]){H}, -1)));
    CHECK_OK(dnnp_op_builder_set_name(b, "gdn_bad"));
    CHECK_OK(dnnp_op_builder_finish(b, g, NULL));
    dnnp_op_builder_destroy(b);
    CHECK_STATUS(dnnp_graph_validate(g), DNNP_STATUS_INVALID_GRAPH);
    CHECK_LAST_ERROR_CONTAINS("node `gdn_bad`, port `safe_gate`: input `a_log` bound requires `safe_gate` true");
    dnnp_graph_destroy(g);

    /* Typed helpers: forward without final state, then backward with an initial state. */
    CHECK_OK(dnnp_graph_create(DNNP_DATA_TYPE_BFLOAT16, DNNP_DATA_TYPE_FLOAT, DNNP_DATA_TYPE_FLOAT, &gb));
    q = tensor(gb, "q", DNNP_DATA_TYPE_BFLOAT16, 3, qd, -1);
    k = tensor(gb, "k", DNNP_DATA_TYPE_BFLOAT16, 3, qd, -1);
    v = tensor(gb, "v", DNNP_DATA_TYPE_BFLOAT16, 3, vd, -1);
    gate = tensor(gb, "g", DNNP_DATA_TYPE_FLOAT, 2, gd, -1);
    beta = tensor(gb, "beta", DNNP_DATA_TYPE_BFLOAT16, 2, gd, -1);
    cus = tensor(gb, "cu_seqlens", DNNP_DATA_TYPE_INT64, 1, cu, -1);
    init = tensor(gb, "h0", DNNP_DATA_TYPE_FLOAT, 4, state, -1);
    CHECK_OK(dnnp_graph_gdn(gb, q, k, v, gate, beta, cus, init, 0.0, false, true, "fwd", &o, &fin));
    CHECK(o > 0);
    CHECK_EQ_INT(fin, -1);
    d_o = tensor(gb, "dO", DNNP_DATA_TYPE_BFLOAT16, 3, vd, -1);
    CHECK_OK(dnnp_graph_gdn_bwd(gb, q, k, v, gate, beta, cus, d_o, init, -1, 0.0, true, "bwd",
                                &dq, &dk, &dv, &dg, &dbeta, &dinit));
    CHECK(dq > 0 && dk > 0 && dv > 0 && dg > 0 && dbeta > 0 && dinit > 0);
    CHECK_OK(dnnp_graph_validate(gb));
    check_dims(gb, dq, 3, qd);
    check_dims(gb, dv, 3, vd);
    check_dims(gb, dg, 2, gd);
    check_dims(gb, dinit, 4, state);
    CHECK_OK(dnnp_graph_node_op_name(gb, 1, name, sizeof name, NULL));
    CHECK_STR_EQ(name, "gdn_bwd");
    CHECK_OK(dnnp_graph_node_name(gb, 1, name, sizeof name, NULL));
    CHECK_STR_EQ(name, "bwd");
    /* Without initial_state the backward has no d_initial_state. */
    CHECK_OK(dnnp_graph_gdn_bwd(gb, q, k, v, gate, beta, cus, d_o, -1, -1, 0.0, false, NULL,
                                &dq, &dk, &dv, &dg, &dbeta, &dinit));
    CHECK_EQ_INT(dinit, -1);
    CHECK_STATUS(dnnp_graph_gdn(gb, q, k, v, gate, beta, cus, -1, 0.0, false, false, NULL, NULL, &fin),
                 DNNP_STATUS_NULL_PARAMETER);
    CHECK_LAST_ERROR_CONTAINS("out_o");
    dnnp_graph_destroy(gb);
    return 0;
}
