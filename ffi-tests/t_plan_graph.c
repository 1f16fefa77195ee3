/* A plan list made from a graph handle: the graph is validated and frozen (planning is one-shot),
 * later mutations and a second plan list are refused, an invalid graph is refused with the node,
 * port and rule, and the list keeps its own snapshot (the graph may be destroyed first). */
#include "common.h"

static dnnp_graph_t *relu_add_graph(int64_t b_rows) {
    dnnp_graph_t *g = NULL;
    const int64_t xd[2] = {4, 16}, bd[2] = {1, 16};
    int64_t x = -1, b = -1, s = -1, y = -1;
    int64_t bdims[2];
    bdims[0] = b_rows;
    bdims[1] = bd[1];
    CHECK_OK(dnnp_graph_create(DNNP_DATA_TYPE_HALF, DNNP_DATA_TYPE_FLOAT, DNNP_DATA_TYPE_FLOAT, &g));
    CHECK_OK(dnnp_graph_tensor_create(g, "x", DNNP_DATA_TYPE_HALF, 2, xd, NULL, -1, &x));
    CHECK_OK(dnnp_graph_tensor_create(g, "b", DNNP_DATA_TYPE_HALF, 2, bdims, NULL, -1, &b));
    CHECK_OK(dnnp_graph_pointwise(g, "add", x, b, -1, DNNP_DATA_TYPE_FLOAT, NULL, &s));
    CHECK_OK(dnnp_graph_pointwise(g, "relu", s, -1, -1, DNNP_DATA_TYPE_FLOAT, NULL, &y));
    return g;
}

int main(void) {
    dnnp_graph_t *g = relu_add_graph(1), *bad = relu_add_graph(3);
    dnnp_plan_list_t *list = NULL, *again = NULL;
    bool validated = false, frozen = false;
    int64_t extra = -1;
    const int64_t d[2] = {4, 16};
    size_t count = 99;
    dnnp_status_t s;

    CHECK_OK(dnnp_graph_create_plan_list(g, &list));
    CHECK(list != NULL);
    CHECK_OK(dnnp_graph_get_state(g, &validated, &frozen));
    CHECK(validated && frozen);
    /* one-shot: the graph is frozen for good */
    CHECK_STATUS(dnnp_graph_create_plan_list(g, &again), DNNP_STATUS_INVALID_STATE);
    CHECK(again == NULL);
    CHECK_STATUS(dnnp_graph_tensor_create(g, "late", DNNP_DATA_TYPE_HALF, 2, d, NULL, -1, &extra),
                 DNNP_STATUS_INVALID_STATE);
    CHECK_LAST_ERROR_CONTAINS("frozen");
    /* the list owns a snapshot */
    dnnp_graph_destroy(g);
    CHECK_OK(dnnp_plan_list_get_count(list, &count));
    CHECK_EQ_SIZE(count, 0);
    s = dnnp_plan_list_create_execution_plans(list, NULL, 0);
    CHECK(s == DNNP_STATUS_SUCCESS || s == DNNP_STATUS_NOT_SUPPORTED);
    dnnp_plan_list_destroy(list);

    /* an invalid graph: the error names the node, the port and the rule; nothing is frozen */
    CHECK_STATUS(dnnp_graph_create_plan_list(bad, &list), DNNP_STATUS_INVALID_GRAPH);
    CHECK_LAST_ERROR_CONTAINS("add");
    CHECK_LAST_ERROR_CONTAINS("do not broadcast");
    CHECK_OK(dnnp_graph_get_state(bad, &validated, &frozen));
    CHECK(!frozen);
    CHECK_STATUS(dnnp_graph_create_plan_list(NULL, &list), DNNP_STATUS_NULL_PARAMETER);
    CHECK_STATUS(dnnp_graph_create_plan_list(bad, NULL), DNNP_STATUS_NULL_PARAMETER);
    dnnp_graph_destroy(bad);
    return 0;
}
