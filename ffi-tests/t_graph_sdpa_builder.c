/* Builds an SDPA forward graph with the generic op builder (ports and attributes by name), reads
 * it back (node count, op kind and name, port uids, attributes JSON, tensor descriptors),
 * validates it, and round-trips it through JSON (same key). Also the builder's error statuses. */
#include <stdlib.h>
#include <string.h>

#include "common.h"

static char *graph_json(const dnnp_graph_t *g) {
    size_t needed = 0;
    char *buf;
    CHECK_STATUS(dnnp_graph_to_json(g, NULL, 0, &needed), DNNP_STATUS_BUFFER_TOO_SMALL);
    buf = (char *)malloc(needed);
    CHECK(buf != NULL);
    CHECK_OK(dnnp_graph_to_json(g, buf, needed, NULL));
    CHECK_EQ_SIZE(strlen(buf) + 1, needed);
    return buf;
}

static int64_t tensor(dnnp_graph_t *g, const char *name, const int64_t dims[4]) {
    int64_t uid = -2;
    CHECK_OK(dnnp_graph_tensor_create(g, name, DNNP_DATA_TYPE_HALF, 4, dims, NULL, -1, &uid));
    CHECK(uid > 0);
    return uid;
}

int main(void) {
    const int64_t qd[4] = {2, 8, 128, 64}, kvd[4] = {2, 2, 256, 64};
    dnnp_graph_t *g = NULL, *back = NULL;
    dnnp_op_builder_t *b = NULL;
    int64_t q, k, v, o = -1, stats = -1, got = -1, ragged = 0;
    size_t node = 99, count = 0, rank = 0, needed = 0;
    uint32_t kind = 0, want_kind = 1;
    int64_t dims[8], strides[8];
    dnnp_data_type_t dt = 0;
    bool is_virtual = false, by_value = true, validated = true, frozen = true;
    char name[64];
    char *attrs = (char *)malloc(4096);
    uint8_t key1[32], key2[32];
    char *json1, *json2;

    CHECK(attrs != NULL);
    CHECK_OK(dnnp_graph_create(DNNP_DATA_TYPE_HALF, DNNP_DATA_TYPE_FLOAT, DNNP_DATA_TYPE_FLOAT, &g));
    q = tensor(g, "q", qd);
    k = tensor(g, "k", kvd);
    v = tensor(g, "v", kvd);

    CHECK_OK(dnnp_op_builder_begin("sdpa", &b));
    CHECK_OK(dnnp_op_builder_set_name(b, "attn"));
    CHECK_OK(dnnp_op_builder_set_input(b, "q", q));
    CHECK_OK(dnnp_op_builder_set_input(b, "k", k));
    CHECK_OK(dnnp_op_builder_set_input(b, "v", v));
    CHECK_OK(dnnp_op_builder_set_attr_bool(b, "generate_stats", true));
    CHECK_OK(dnnp_op_builder_set_attr_float(b, "attn_scale", 0.125));
    CHECK_OK(dnnp_op_builder_set_attr_bool(b, "use_causal_mask", true));
    CHECK_OK(dnnp_op_builder_set_attr_string(b, "implementation", "COMPOSITE"));
    /* Errors name the op, port or attribute; the builder stays usable. */
    CHECK_STATUS(dnnp_op_builder_set_input(b, "query", q), DNNP_STATUS_NOT_FOUND);
    CHECK_LAST_ERROR_CONTAINS("sdpa.query");
    CHECK_STATUS(dnnp_op_builder_set_attr_string(b, "implementation", "FAST"), DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("is not one of AUTO, COMPOSITE, UNIFIED");
    CHECK_STATUS(dnnp_op_builder_set_attr_int(b, "use_causal_mask", 1), DNNP_STATUS_BAD_PARAM);
    CHECK_STATUS(dnnp_op_builder_set_attr_bool(b, "no_such_attr", true), DNNP_STATUS_NOT_FOUND);
    CHECK_STATUS(dnnp_op_builder_output_uid(b, "O", &o), DNNP_STATUS_INVALID_STATE);
    CHECK_OK(dnnp_op_builder_finish(b, g, &node));
    CHECK_EQ_SIZE(node, 0);
    CHECK_OK(dnnp_op_builder_output_uid(b, "O", &o));
    CHECK_OK(dnnp_op_builder_output_uid(b, "Stats", &stats));
    CHECK_STATUS(dnnp_op_builder_output_uid(b, "rng_dump", &got), DNNP_STATUS_NOT_FOUND);
    CHECK_STATUS(dnnp_op_builder_finish(b, g, NULL), DNNP_STATUS_INVALID_STATE);
    dnnp_op_builder_destroy(b);
    CHECK(o > 0 && stats > 0 && o != stats);

    CHECK_STATUS(dnnp_op_builder_begin("sdpa_forward", &b), DNNP_STATUS_NOT_FOUND);
    CHECK_LAST_ERROR_CONTAINS("sdpa_forward");

    /* O is a graph output. */
    CHECK_OK(dnnp_graph_tensor_set_virtual(g, o, false));
    CHECK_OK(dnnp_graph_get_state(g, &validated, &frozen));
    CHECK(!validated && !frozen);
    CHECK_OK(dnnp_graph_validate(g));
    CHECK_OK(dnnp_graph_get_state(g, &validated, &frozen));
    CHECK(validated && !frozen);

    /* Read back. */
    CHECK_OK(dnnp_graph_node_count(g, &count));
    CHECK_EQ_SIZE(count, 1);
    CHECK_OK(dnnp_graph_node_op_kind(g, 0, &kind));
    CHECK_OK(dnnp_op_kind_from_name("sdpa", &want_kind));
    CHECK_EQ_INT(kind, want_kind);
    CHECK_OK(dnnp_graph_node_op_name(g, 0, name, sizeof name, NULL));
    CHECK_STR_EQ(name, "sdpa");
    CHECK_OK(dnnp_graph_node_name(g, 0, name, sizeof name, NULL));
    CHECK_STR_EQ(name, "attn");
    CHECK_OK(dnnp_graph_node_port_uid(g, 0, "q", &got));
    CHECK_EQ_INT(got, q);
    CHECK_OK(dnnp_graph_node_port_uid(g, 0, "Stats", &got));
    CHECK_EQ_INT(got, stats);
    CHECK_STATUS(dnnp_graph_node_port_uid(g, 0, "bias", &got), DNNP_STATUS_NOT_FOUND);
    CHECK_STATUS(dnnp_graph_node_port_uid(g, 3, "q", &got), DNNP_STATUS_NOT_FOUND);
    CHECK_OK(dnnp_graph_node_attributes_json(g, 0, attrs, 4096, &needed));
    CHECK_STR_CONTAINS(attrs, "\"node_type\":\"SDPA\"");
    CHECK_STR_CONTAINS(attrs, "\"attn_scale\":0.125");
    CHECK_STR_CONTAINS(attrs, "\"implementation\":\"COMPOSITE\"");
    CHECK_STR_CONTAINS(attrs, "\"use_padding_mask\":false"); /* a table default */

    CHECK_OK(dnnp_graph_tensor_get(g, o, &dt, &rank, NULL, NULL, 0, NULL, NULL, NULL));
    CHECK_EQ_SIZE(rank, 4);
    CHECK_STATUS(dnnp_graph_tensor_get(g, o, NULL, &rank, dims, NULL, 2, NULL, NULL, NULL),
                 DNNP_STATUS_BUFFER_TOO_SMALL);
    CHECK_OK(dnnp_graph_tensor_get(g, o, &dt, &rank, dims, strides, 8, &is_virtual, &by_value, &ragged));
    CHECK_EQ_INT(dims[0], 2);
    CHECK_EQ_INT(dims[1], 8);
    CHECK_EQ_INT(dims[2], 128);
    CHECK_EQ_INT(dims[3], 64);
    CHECK_EQ_INT(strides[0], 8 * 128 * 64);
    CHECK_EQ_INT(strides[3], 1);
    CHECK_EQ_INT(dt, DNNP_DATA_TYPE_HALF); /* graph output: io */
    CHECK(!is_virtual && !by_value);
    CHECK_EQ_INT(ragged, -1);
    CHECK_OK(dnnp_graph_tensor_get(g, stats, &dt, &rank, dims, NULL, 8, &is_virtual, NULL, NULL));
    CHECK_EQ_INT(dt, DNNP_DATA_TYPE_FLOAT); /* SDPA Stats is FP32 */
    CHECK_EQ_INT(dims[3], 1);
    CHECK(is_virtual);
    CHECK_OK(dnnp_graph_tensor_count(g, &count));
    CHECK_EQ_SIZE(count, 5);
    CHECK_OK(dnnp_graph_tensor_uid_at(g, 0, &got));
    CHECK_EQ_INT(got, 1);
    CHECK_OK(dnnp_graph_tensor_json(g, q, attrs, 4096, NULL));
    CHECK_STR_CONTAINS(attrs, "\"name\":\"q\"");

    /* JSON round trip: same document, same key. */
    json1 = graph_json(g);
    CHECK_STR_CONTAINS(json1, "\"schema_version\": 1");
    CHECK_OK(dnnp_graph_from_json(json1, &back));
    json2 = graph_json(back);
    CHECK_STR_EQ(json1, json2);
    CHECK_OK(dnnp_graph_key(g, key1));
    CHECK_OK(dnnp_graph_key(back, key2));
    CHECK(memcmp(key1, key2, 32) == 0);
    CHECK_STATUS(dnnp_graph_from_json("{\"schema_version\": 7}", &back), DNNP_STATUS_BAD_PARAM);

    /* A mutation invalidates; a bad graph fails naming node, port and rule. */
    CHECK_OK(dnnp_graph_tensor_set_dims(back, k, 4, (const int64_t[]){2, 3, 256, 64}));
    CHECK_STATUS(dnnp_graph_validate(back), DNNP_STATUS_INVALID_GRAPH);
    CHECK_LAST_ERROR_CONTAINS("node `attn`, port `q`: h_q must be a multiple of h_k");

    free(attrs);
    free(json1);
    free(json2);
    dnnp_graph_destroy(back);
    dnnp_graph_destroy(g);
    dnnp_graph_destroy(NULL);
    dnnp_op_builder_destroy(NULL);
    return 0;
}
