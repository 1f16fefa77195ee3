/* dnnp_graph_explain on graph handles: JSON with the family, the engines, the backend's verdict
 * per mode and the plans; the caller's graph is not planned or frozen; the linear-attention ops
 * are declined by the backend statically; an invalid graph and a bad mode are refused. */
#include <stdlib.h>
#include <string.h>

#include "common.h"

static char *explain(const dnnp_graph_t *g, const dnnp_heur_mode_t *modes, size_t n) {
    size_t needed = 0;
    char *buf;
    CHECK_STATUS(dnnp_graph_explain(g, modes, n, NULL, 0, &needed), DNNP_STATUS_BUFFER_TOO_SMALL);
    buf = (char *)malloc(needed);
    CHECK(buf != NULL);
    CHECK_OK(dnnp_graph_explain(g, modes, n, buf, needed, &needed));
    CHECK_EQ_SIZE(strlen(buf) + 1, needed);
    return buf;
}

static void pointwise(void) {
    dnnp_graph_t *g = NULL;
    const int64_t xd[2] = {4, 16};
    int64_t x = -1, y = -1;
    dnnp_heur_mode_t modes[] = {DNNP_HEUR_MODE_FALLBACK, DNNP_HEUR_MODE_OPENSOURCE};
    dnnp_heur_mode_t bad_modes[] = {9};
    bool frozen = true;
    char *json;
    CHECK_OK(dnnp_graph_create(DNNP_DATA_TYPE_HALF, DNNP_DATA_TYPE_FLOAT, DNNP_DATA_TYPE_FLOAT, &g));
    CHECK_OK(dnnp_graph_tensor_create(g, "x", DNNP_DATA_TYPE_HALF, 2, xd, NULL, -1, &x));
    CHECK_OK(dnnp_graph_pointwise(g, "relu", x, -1, -1, DNNP_DATA_TYPE_FLOAT, NULL, &y));
    json = explain(g, NULL, 0);
    CHECK_STR_CONTAINS(json, "\"modes\":[\"A\",\"FALLBACK\"]");
    CHECK_STR_CONTAINS(json, "\"family\":{\"name\":null");
    CHECK_STR_CONTAINS(json, "no node type anchors a bundled-engine family");
    CHECK_STR_CONTAINS(json, "\"candidates\":[]");
    CHECK_STR_CONTAINS(json, "\"backend\":{\"provider\":");
    CHECK_STR_CONTAINS(json, "\"plans\":[");
    free(json);
    json = explain(g, modes, 2);
    CHECK_STR_CONTAINS(json, "\"modes\":[\"FALLBACK\",\"OPENSOURCE\"]");
    free(json);
    /* the graph's target statement wins over this machine's device */
    CHECK_OK(dnnp_graph_set_target(g, NULL, 132, 90));
    json = explain(g, NULL, 0);
    CHECK_STR_CONTAINS(json, "\"arch\":90");
    CHECK_STR_CONTAINS(json, "current device is SM90");
    free(json);
    CHECK_STATUS(dnnp_graph_explain(g, bad_modes, 1, NULL, 0, NULL), DNNP_STATUS_BAD_PARAM);
    CHECK_STATUS(dnnp_graph_explain(NULL, NULL, 0, NULL, 0, NULL), DNNP_STATUS_NULL_PARAMETER);
    /* explaining does not plan the caller's graph */
    CHECK_OK(dnnp_graph_get_state(g, NULL, &frozen));
    CHECK(!frozen);
    dnnp_graph_destroy(g);
}

static void gdn_is_not_lowerable(void) {
    char *text = dnnp_test_read_file("examples/graphs/gdn_forward.json");
    dnnp_graph_t *g = NULL;
    char *json;
    CHECK_OK(dnnp_graph_from_json(text, &g));
    free(text);
    json = explain(g, NULL, 0);
    CHECK_STR_CONTAINS(json, "No valid engine configs for GDN");
    CHECK_STR_CONTAINS(json, "has no cuDNN backend lowering");
    free(json);
    dnnp_graph_destroy(g);
}

static void invalid_graph(void) {
    dnnp_graph_t *g = NULL;
    const int64_t ad[2] = {2, 3}, bd[2] = {4, 3};
    int64_t a = -1, b = -1, s = -1;
    size_t needed = 0;
    CHECK_OK(dnnp_graph_create(DNNP_DATA_TYPE_HALF, DNNP_DATA_TYPE_FLOAT, DNNP_DATA_TYPE_FLOAT, &g));
    CHECK_OK(dnnp_graph_tensor_create(g, "a", DNNP_DATA_TYPE_HALF, 2, ad, NULL, -1, &a));
    CHECK_OK(dnnp_graph_tensor_create(g, "b", DNNP_DATA_TYPE_HALF, 2, bd, NULL, -1, &b));
    CHECK_OK(dnnp_graph_pointwise(g, "add", a, b, -1, DNNP_DATA_TYPE_FLOAT, NULL, &s));
    CHECK_STATUS(dnnp_graph_explain(g, NULL, 0, NULL, 0, &needed), DNNP_STATUS_INVALID_GRAPH);
    CHECK_LAST_ERROR_CONTAINS("do not broadcast");
    dnnp_graph_destroy(g);
}

int main(void) {
    pointwise();
    gdn_is_not_lowerable();
    invalid_graph();
    return 0;
}
