/* Replay of a recorded (engine_id, knobs) choice through the C API: exact entries appended,
 * planning marked done, unknown ids and bad knob values refused (never a neighbour). */
#include "plan_common.h"

#define SCRIPT "{\"ops\": [\"exp\"], \"arch\": 90, \"backend\": " PLAN_TEST_BACKEND "}"

static void round_trip(void) {
    dnnp_plan_list_t *planned = plan_test_list(SCRIPT);
    dnnp_plan_list_t *replayed = plan_test_list(SCRIPT);
    size_t count = 0, i, index = 99;
    CHECK_OK(dnnp_plan_list_create_execution_plans(planned, NULL, 0));
    CHECK_OK(dnnp_plan_list_get_count(planned, &count));
    CHECK_EQ_SIZE(count, 6);
    for (i = 0; i < count; ++i) {
        int64_t id = 0;
        dnnp_knob_type_t types[8];
        int64_t values[8];
        size_t n = 0;
        char want[128], got[128];
        CHECK_OK(dnnp_plan_list_get_engine_and_knobs(planned, i, &id, types, values, 8, &n));
        CHECK_OK(dnnp_plan_list_get_plan_name(planned, i, want, sizeof want, NULL));
        if (n == 1 && types[0] == DNNP_KNOB_TYPE_NOT_SET) {
            /* eng3's raw backend knob 0 has no public name: it cannot be replayed */
            CHECK_STATUS(dnnp_plan_list_create_execution_plan(replayed, id, types, values, n, &index),
                         DNNP_STATUS_BAD_PARAM);
            continue;
        }
        CHECK_OK(dnnp_plan_list_create_execution_plan(replayed, id, types, values, n, &index));
        CHECK_OK(dnnp_plan_list_get_plan_name(replayed, index, got, sizeof got, NULL));
        CHECK_STR_EQ(got, want);
    }
    CHECK_OK(dnnp_plan_list_get_count(replayed, &count));
    CHECK_EQ_SIZE(count, 5);
    /* replay marked planning done: it is one-shot */
    CHECK_STATUS(dnnp_plan_list_create_execution_plans(replayed, NULL, 0), DNNP_STATUS_INVALID_STATE);
    /* the replayed entries build */
    CHECK_OK(dnnp_plan_list_build_plan_at_index(replayed, 0));
    dnnp_plan_list_destroy(planned);
    dnnp_plan_list_destroy(replayed);
}

static void refusals(void) {
    dnnp_plan_list_t *list = plan_test_list(SCRIPT);
    dnnp_knob_type_t tile_m[] = {DNNP_KNOB_TYPE_TILE_M};
    dnnp_knob_type_t split_kv[] = {DNNP_KNOB_TYPE_SPLIT_KV};
    dnnp_knob_type_t undefined[] = {4242};
    dnnp_knob_type_t twice[] = {DNNP_KNOB_TYPE_TILE_M, DNNP_KNOB_TYPE_TILE_M};
    int64_t v96[] = {96}, v64[] = {64, 64}, v2[] = {2};
    size_t index = 99, count = 0;
    const int64_t alpha = DNNP_ENGINE_ID_BUNDLED_BASE, beta = alpha + 1, delta = alpha + 4;

    CHECK_STATUS(dnnp_plan_list_create_execution_plan(list, alpha, tile_m, v96, 1, &index),
                 DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("TILE_M=96");
    CHECK_STATUS(dnnp_plan_list_create_execution_plan(list, alpha, undefined, v2, 1, &index),
                 DNNP_STATUS_BAD_PARAM);
    CHECK_STATUS(dnnp_plan_list_create_execution_plan(list, alpha, twice, v64, 2, &index),
                 DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("given twice");
    CHECK_STATUS(dnnp_plan_list_create_execution_plan(list, beta, tile_m, v64, 1, &index),
                 DNNP_STATUS_BAD_PARAM);
    CHECK_STATUS(dnnp_plan_list_create_execution_plan(list, delta, NULL, NULL, 0, &index),
                 DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("DNNPLAN_ENABLE_OPT_IN_ENGINES");
    CHECK_STATUS(dnnp_plan_list_create_execution_plan(list, alpha + 3, NULL, NULL, 0, &index),
                 DNNP_STATUS_NOT_FOUND);
    CHECK_STATUS(dnnp_plan_list_create_execution_plan(list, 20517, NULL, NULL, 0, &index),
                 DNNP_STATUS_NOT_FOUND);
    CHECK_LAST_ERROR_CONTAINS("frost_sdpa_fwd");
    CHECK_STATUS(dnnp_plan_list_create_execution_plan(list, DNNP_ENGINE_ID_CPP_OSS_BASE, NULL, NULL, 0,
                                                      &index),
                 DNNP_STATUS_NOT_FOUND);
    CHECK_STATUS(dnnp_plan_list_create_execution_plan(list, DNNP_ENGINE_ID_BACKEND_HEURISTIC, NULL,
                                                      NULL, 0, &index),
                 DNNP_STATUS_BAD_PARAM);
    CHECK_STATUS(dnnp_plan_list_create_execution_plan(list, -2, NULL, NULL, 0, &index),
                 DNNP_STATUS_BAD_PARAM);
    /* frontend-only knobs never reach the backend */
    CHECK_STATUS(dnnp_plan_list_create_execution_plan(list, 1, split_kv, v2, 1, &index),
                 DNNP_STATUS_BAD_PARAM);
    CHECK_STATUS(dnnp_plan_list_create_execution_plan(list, alpha, NULL, v64, 1, &index),
                 DNNP_STATUS_NULL_PARAMETER);
    CHECK_STATUS(dnnp_plan_list_create_execution_plan(NULL, alpha, NULL, NULL, 0, &index),
                 DNNP_STATUS_NULL_PARAMETER);
    CHECK_EQ_SIZE(index, 99);
    CHECK_OK(dnnp_plan_list_get_count(list, &count));
    CHECK_EQ_SIZE(count, 0);
    /* a failed replay did not mark planning done */
    CHECK_OK(dnnp_plan_list_create_execution_plans(list, NULL, 0));
    dnnp_plan_list_destroy(list);
}

static void pinned_id_outside_the_candidates(void) {
    /* gamma (SM100) is no candidate on SM90: replay lists it, its build declines */
    dnnp_plan_list_t *list = plan_test_list(SCRIPT);
    size_t index = 99;
    CHECK_OK(dnnp_plan_list_create_execution_plan(list, DNNP_ENGINE_ID_BUNDLED_BASE + 2, NULL, NULL,
                                                  0, &index));
    CHECK_EQ_SIZE(index, 0);
    CHECK_PLAN_NAME(list, 0, "gamma");
    CHECK_OK(dnnp_plan_list_select_plan(list, 0));
    CHECK_STATUS(dnnp_plan_list_build_plans(list, DNNP_BUILD_POLICY_HEURISTICS_CHOICE),
                 DNNP_STATUS_NOT_SUPPORTED);
    CHECK_LAST_ERROR_CONTAINS("requires SM100-109");
    dnnp_plan_list_destroy(list);
}

int main(void) {
    round_trip();
    refusals();
    pinned_id_outside_the_candidates();
    return 0;
}
