/* Excluding plans through the C API: deselect by name substring (indices stay, the walk skips,
 * direct use is refused, a pin on an excluded plan fails) and a workspace limit (plans over it
 * decline once built). */
#include "plan_common.h"

#define UNRANKED \
    "{\"ops\": [\"sqrt\"], \"arch\": 90, \"backend\": {\"modes\": {\"A\": [[1, [[40, 128]]], [2, []]]," \
    " \"FALLBACK\": [[3, [[0, 2]]]]}}}"

static void by_name(void) {
    /* [0] norm_broken_build [1] norm_sm90 [2] eng1_k40=128 [3] eng2 [4] eng3_k0=2 */
    dnnp_plan_list_t *list = plan_test_list(UNRANKED);
    const char *names[] = {"norm_sm90", "k40="};
    size_t selected = 99, count = 0;
    uint64_t ws = 0;
    CHECK_OK(dnnp_plan_list_create_execution_plans(list, NULL, 0));
    CHECK_OK(dnnp_plan_list_deselect_engines(list, names, 2));
    CHECK_OK(dnnp_plan_list_get_count(list, &count));
    CHECK_EQ_SIZE(count, 5);
    CHECK_PLAN_NAME(list, 1, "norm_sm90");
    CHECK_OK(dnnp_plan_list_build_plans(list, DNNP_BUILD_POLICY_HEURISTICS_CHOICE));
    CHECK_OK(dnnp_plan_list_get_selected_index(list, &selected));
    CHECK_EQ_SIZE(selected, 3);
    CHECK_STATUS(dnnp_plan_list_build_plan_at_index(list, 1), DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("excluded by deselect_engines(\"norm_sm90\")");
    CHECK_STATUS(dnnp_plan_list_get_workspace_size_at_index(list, 2, &ws), DNNP_STATUS_BAD_PARAM);
    CHECK_OK(dnnp_plan_list_select_plan(list, 2));
    CHECK_STATUS(dnnp_plan_list_build_plans(list, DNNP_BUILD_POLICY_HEURISTICS_CHOICE),
                 DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("drop one of the two instructions");
    CHECK_STATUS(dnnp_plan_list_deselect_engines(list, NULL, 1), DNNP_STATUS_NULL_PARAMETER);
    dnnp_plan_list_destroy(list);
}

static void by_workspace(void) {
    /* ranked: [0] alpha[TILE_M=128] 4096 B, [1] beta 0 B, [2] eng1 2048 B, [3] eng2 3072 B, ... */
    dnnp_plan_list_t *list = plan_test_list("{\"ops\": [\"exp\"], \"arch\": 90, \"backend\": " PLAN_TEST_BACKEND "}");
    size_t selected = 99;
    uint64_t ws = 0;
    CHECK_OK(dnnp_plan_list_build_plans(list, DNNP_BUILD_POLICY_HEURISTICS_CHOICE));
    CHECK_OK(dnnp_plan_list_get_workspace_size(list, &ws));
    CHECK_EQ_INT(ws, 4096);
    CHECK_OK(dnnp_plan_list_deselect_workspace_greater_than(list, 2048));
    CHECK_STATUS(dnnp_plan_list_get_workspace_size(list, &ws), DNNP_STATUS_INVALID_STATE);
    CHECK_OK(dnnp_plan_list_build_plans(list, DNNP_BUILD_POLICY_HEURISTICS_CHOICE));
    CHECK_OK(dnnp_plan_list_get_selected_index(list, &selected));
    CHECK_EQ_SIZE(selected, 1);
    CHECK_STATUS(dnnp_plan_list_build_plan_at_index(list, 3), DNNP_STATUS_NOT_SUPPORTED);
    CHECK_LAST_ERROR_CONTAINS("needs 3072 workspace bytes, over the 2048-byte limit");
    CHECK_OK(dnnp_plan_list_build_plan_at_index(list, 2));
    dnnp_plan_list_destroy(list);
}

int main(void) {
    by_name();
    by_workspace();
    return 0;
}
