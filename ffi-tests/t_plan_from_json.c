/* A plan list from graph JSON, on the production path (dnnplan's manifest, this machine's device,
 * the cuDNN backend): whatever the machine offers, planning either lists plans or fails with
 * NOT_SUPPORTED naming the backend's and the engines' reasons; never a crash. Bad input is a
 * clear status. */
#include <string.h>

#include "plan_common.h"

static const char *const RELU_GRAPH =
    "{\"format\": \"dnnplan.graph\", \"schema_version\": 1,"
    " \"context\": {\"io_data_type\": \"HALF\", \"intermediate_data_type\": \"FLOAT\","
    " \"compute_data_type\": \"FLOAT\"},"
    " \"tensors\": [{\"uid\": 1, \"name\": \"x\", \"dims\": [2, 4], \"strides\": [4, 1],"
    " \"data_type\": \"HALF\", \"is_virtual\": false, \"is_pass_by_value\": false},"
    " {\"uid\": 2, \"name\": \"y\", \"dims\": [2, 4], \"strides\": [4, 1], \"data_type\": null, \"is_virtual\": false, \"is_pass_by_value\": false}],"
    " \"nodes\": [{\"name\": \"relu.0\", \"op\": \"relu\", \"compute_data_type\": null, \"inputs\": {\"input\": 1},"
    " \"outputs\": {\"OUT_0\": 2}, \"attrs\": {}}]}";

static void production_path(void) {
    dnnp_plan_list_t *list = NULL;
    size_t count = 99;
    dnnp_status_t s;
    CHECK_OK(dnnp_plan_list_create_from_json(RELU_GRAPH, &list));
    CHECK_OK(dnnp_plan_list_get_count(list, &count));
    CHECK_EQ_SIZE(count, 0);
    s = dnnp_plan_list_create_execution_plans(list, NULL, 0);
    if (s != DNNP_STATUS_SUCCESS) {
        CHECK_EQ_INT(s, DNNP_STATUS_NOT_SUPPORTED);
        CHECK_LAST_ERROR_CONTAINS("no engine (bundled or backend) proposed a plan");
        CHECK_LAST_ERROR_CONTAINS("the backend declined");
    }
    CHECK_OK(dnnp_plan_list_get_count(list, &count));
    if (s == DNNP_STATUS_SUCCESS) {
        /* a machine whose backend takes the graph: every plan is a backend plan */
        size_t i;
        CHECK(count > 0);
        for (i = 0; i < count; ++i) {
            char name[256];
            CHECK_OK(dnnp_plan_list_get_plan_name(list, i, name, sizeof name, NULL));
            CHECK(strncmp(name, "eng", 3) == 0 || strcmp(name, "backend_heuristics") == 0);
        }
    } else {
        CHECK_EQ_SIZE(count, 0);
        /* the walk plans again (a failed planning leaves no list) and fails the same way */
        CHECK_STATUS(dnnp_plan_list_build_plans(list, DNNP_BUILD_POLICY_HEURISTICS_CHOICE),
                     DNNP_STATUS_NOT_SUPPORTED);
        CHECK_STATUS(dnnp_plan_list_select_plan(list, 0), DNNP_STATUS_INVALID_STATE);
    }
    dnnp_plan_list_destroy(list);
}

static void bad_input(void) {
    dnnp_plan_list_t *list = NULL;
    CHECK_STATUS(dnnp_plan_list_create_from_json(NULL, &list), DNNP_STATUS_NULL_PARAMETER);
    CHECK_STATUS(dnnp_plan_list_create_from_json(RELU_GRAPH, NULL), DNNP_STATUS_NULL_PARAMETER);
    CHECK_STATUS(dnnp_plan_list_create_from_json("{not json", &list), DNNP_STATUS_BAD_PARAM);
    CHECK(list == NULL);
    CHECK_STATUS(dnnp_debug_plan_list_create_stand_in("{\"ops\": [\"exp\"], \"what\": 1}", &list),
                 DNNP_STATUS_BAD_PARAM);
    CHECK(list == NULL);
    CHECK_STATUS(dnnp_plan_list_get_count(NULL, NULL), DNNP_STATUS_NULL_PARAMETER);
}

int main(void) {
    production_path();
    bad_input();
    return 0;
}
