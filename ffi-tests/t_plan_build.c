/* The build walk through the C API: a decline advances, a pinned plan's decline is an error,
 * build at an index selects without pinning, the ALL policy, workspace sizes, state errors. */
#include "plan_common.h"

#define UNRANKED(extra) \
    "{\"ops\": [\"sqrt\"], \"arch\": 90, \"backend\": {\"engine_count\": 3, " extra \
    "\"modes\": {\"A\": [[1, [[40, 128]]], [2, []]], \"FALLBACK\": [[3, [[0, 2]]]]}}}"

static void walk(void) {
    /* [0] norm_broken_build (declines at build) [1] norm_sm90 [2] eng1 [3] eng2 [4] eng3 */
    static const char *const NAMES[] = {"norm_broken_build", "norm_sm90", "eng1_k40=128", "eng2",
                                        "eng3_k0=2"};
    dnnp_plan_list_t *list = plan_test_list(UNRANKED("\"build_declines\": [1], "));
    size_t selected = 99;
    uint64_t ws = 77;
    CHECK_STATUS(dnnp_plan_list_select_plan(list, 0), DNNP_STATUS_INVALID_STATE);
    CHECK_STATUS(dnnp_plan_list_build_plan_at_index(list, 0), DNNP_STATUS_INVALID_STATE);
    CHECK_STATUS(dnnp_plan_list_get_workspace_size(list, &ws), DNNP_STATUS_INVALID_STATE);
    CHECK_EQ_INT(ws, 77);
    /* build_plans plans first when needed (default modes) */
    CHECK_OK(dnnp_plan_list_build_plans(list, DNNP_BUILD_POLICY_HEURISTICS_CHOICE));
    plan_test_names(list, NAMES, 5);
    CHECK_OK(dnnp_plan_list_get_selected_index(list, &selected));
    CHECK_EQ_SIZE(selected, 1);
    CHECK_OK(dnnp_plan_list_get_workspace_size(list, &ws));
    CHECK_EQ_INT(ws, 0);
    /* from a selected backend index the walk passes eng1's decline and lands on eng2 */
    CHECK_OK(dnnp_plan_list_build_plan_at_index(list, 3));
    CHECK_OK(dnnp_plan_list_get_selected_index(list, &selected));
    CHECK_EQ_SIZE(selected, 3);
    CHECK_OK(dnnp_plan_list_get_workspace_size(list, &ws));
    CHECK_EQ_INT(ws, 1024 * 3);
    /* a decline at an explicit index is an error and keeps the selection */
    CHECK_STATUS(dnnp_plan_list_build_plan_at_index(list, 2), DNNP_STATUS_NOT_SUPPORTED);
    CHECK_LAST_ERROR_CONTAINS("eng1_k40=128 cannot be built here");
    CHECK_OK(dnnp_plan_list_get_selected_index(list, &selected));
    CHECK_EQ_SIZE(selected, 3);
    /* workspace at an index builds that plan without changing the selection */
    CHECK_OK(dnnp_plan_list_get_workspace_size_at_index(list, 4, &ws));
    CHECK_EQ_INT(ws, 1024 * 4);
    CHECK_OK(dnnp_plan_list_get_selected_index(list, &selected));
    CHECK_EQ_SIZE(selected, 3);
    CHECK_STATUS(dnnp_plan_list_get_workspace_size_at_index(list, 5, &ws), DNNP_STATUS_BAD_PARAM);
    CHECK_STATUS(dnnp_plan_list_build_plans(list, 2), DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("build_policy");
    dnnp_plan_list_destroy(list);
}

static void pinned(void) {
    dnnp_plan_list_t *list = plan_test_list(UNRANKED(""));
    size_t selected = 99;
    CHECK_OK(dnnp_plan_list_create_execution_plans(list, NULL, 0));
    CHECK_OK(dnnp_plan_list_select_plan(list, 0));
    CHECK_STATUS(dnnp_plan_list_build_plans(list, DNNP_BUILD_POLICY_HEURISTICS_CHOICE),
                 DNNP_STATUS_NOT_SUPPORTED);
    CHECK_LAST_ERROR_CONTAINS("pinned by select_plan()");
    CHECK_LAST_ERROR_CONTAINS("kernel module unavailable");
    CHECK_STATUS(dnnp_plan_list_select_plan(list, 5), DNNP_STATUS_BAD_PARAM);
    CHECK_OK(dnnp_plan_list_select_plan(list, 2));
    CHECK_OK(dnnp_plan_list_build_plans(list, DNNP_BUILD_POLICY_HEURISTICS_CHOICE));
    CHECK_OK(dnnp_plan_list_get_selected_index(list, &selected));
    CHECK_EQ_SIZE(selected, 2);
    /* ALL builds everything and keeps the built selection */
    CHECK_OK(dnnp_plan_list_build_plans(list, DNNP_BUILD_POLICY_ALL));
    CHECK_OK(dnnp_plan_list_get_selected_index(list, &selected));
    CHECK_EQ_SIZE(selected, 2);
    dnnp_plan_list_destroy(list);
}

static void nothing_builds(void) {
    dnnp_plan_list_t *list = plan_test_list(
        "{\"ops\": [\"neg\"], \"backend\": {\"build_declines\": [1, 2], "
        "\"modes\": {\"A\": [[1, []], [2, []]]}}}");
    CHECK_STATUS(dnnp_plan_list_build_plans(list, DNNP_BUILD_POLICY_HEURISTICS_CHOICE),
                 DNNP_STATUS_NOT_SUPPORTED);
    CHECK_LAST_ERROR_CONTAINS("no plan in the list could be built");
    CHECK_LAST_ERROR_CONTAINS("[0] eng1: eng1 cannot be built here");
    CHECK_LAST_ERROR_CONTAINS("[1] eng2: eng2 cannot be built here");
    dnnp_plan_list_destroy(list);
}

int main(void) {
    walk();
    pinned();
    nothing_builds();
    return 0;
}
