/* The plan list's ranking through the C API: ONE list of bundled and backend plans per heuristic
 * mode, the BACKEND marker's placement (LEAD and TRAIL), dedup, the delegating entry, (engine_id,
 * knobs) at an index as C arrays, and the one-shot rule. */
#include <string.h>

#include "plan_common.h"

static void lead_and_trail(void) {
    static const char *const LEAD[] = {"alpha[TILE_M=128]", "beta", "eng1_k40=128",
                                       "eng2", "alpha[TILE_M=64]", "eng3_k0=2"};
    static const char *const TRAIL[] = {"eng1_k40=128", "eng2", "alpha[TILE_M=128]",
                                        "beta", "eng3_k0=2", "alpha[TILE_M=64]"};
    dnnp_plan_list_t *lead = plan_test_list("{\"ops\": [\"exp\"], \"arch\": 90, \"backend\": " PLAN_TEST_BACKEND "}");
    dnnp_plan_list_t *trail =
        plan_test_list("{\"ops\": [\"exp\", \"sin\"], \"arch\": 90, \"backend\": " PLAN_TEST_BACKEND "}");
    CHECK_OK(dnnp_plan_list_create_execution_plans(lead, NULL, 0));
    plan_test_names(lead, LEAD, 6);
    {
        dnnp_heur_mode_t modes[] = {DNNP_HEUR_MODE_A, DNNP_HEUR_MODE_FALLBACK};
        CHECK_OK(dnnp_plan_list_create_execution_plans(trail, modes, 2));
    }
    plan_test_names(trail, TRAIL, 6);
    /* planning is one-shot */
    CHECK_STATUS(dnnp_plan_list_create_execution_plans(lead, NULL, 0), DNNP_STATUS_INVALID_STATE);
    CHECK_LAST_ERROR_CONTAINS("one-shot");
    dnnp_plan_list_destroy(lead);
    dnnp_plan_list_destroy(trail);
}

static void modes_in_caller_order(void) {
    /* FALLBACK first, then B (families reuse their A proposals for B; the duplicate beta drops) */
    static const char *const NAMES[] = {"beta", "alpha[TILE_M=64]", "eng3_k0=2", "eng1_k40=128",
                                        "alpha[TILE_M=128]", "eng4"};
    static const char *const OSS[] = {"alpha[TILE_M=128]", "beta", "backend_heuristics",
                                      "eng1_k40=128", "eng2"};
    dnnp_heur_mode_t modes[] = {DNNP_HEUR_MODE_FALLBACK, DNNP_HEUR_MODE_B};
    dnnp_heur_mode_t oss[] = {DNNP_HEUR_MODE_OPENSOURCE, DNNP_HEUR_MODE_A};
    dnnp_heur_mode_t bad[] = {DNNP_HEUR_MODE_A, 7};
    dnnp_plan_list_t *list = plan_test_list("{\"ops\": [\"exp\"], \"arch\": 90, \"backend\": " PLAN_TEST_BACKEND "}");
    CHECK_STATUS(dnnp_plan_list_create_execution_plans(list, bad, 2), DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("heur_mode");
    CHECK_STATUS(dnnp_plan_list_create_execution_plans(list, NULL, 1), DNNP_STATUS_NULL_PARAMETER);
    CHECK_OK(dnnp_plan_list_create_execution_plans(list, modes, 2));
    plan_test_names(list, NAMES, 6);
    dnnp_plan_list_destroy(list);

    list = plan_test_list("{\"ops\": [\"exp\"], \"arch\": 90, \"backend\": " PLAN_TEST_BACKEND "}");
    CHECK_OK(dnnp_plan_list_create_execution_plans(list, oss, 2));
    plan_test_names(list, OSS, 5);
    dnnp_plan_list_destroy(list);
}

static void engine_and_knobs(void) {
    dnnp_plan_list_t *list = plan_test_list("{\"ops\": [\"exp\"], \"arch\": 90, \"backend\": " PLAN_TEST_BACKEND "}");
    dnnp_heur_mode_t oss[] = {DNNP_HEUR_MODE_OPENSOURCE, DNNP_HEUR_MODE_A};
    int64_t id = 0;
    dnnp_knob_type_t types[4];
    int64_t values[4];
    size_t n = 99;
    CHECK_OK(dnnp_plan_list_create_execution_plans(list, oss, 2));
    /* two-call: the count comes back even when the arrays are too small */
    CHECK_STATUS(dnnp_plan_list_get_engine_and_knobs(list, 0, &id, NULL, NULL, 0, &n),
                 DNNP_STATUS_BUFFER_TOO_SMALL);
    CHECK_EQ_SIZE(n, 1);
    CHECK_EQ_INT(id, 0); /* outputs only on success */
    CHECK_OK(dnnp_plan_list_get_engine_and_knobs(list, 0, &id, types, values, 4, &n));
    CHECK_EQ_INT(id, DNNP_ENGINE_ID_BUNDLED_BASE);
    CHECK_EQ_SIZE(n, 1);
    CHECK_EQ_INT(types[0], DNNP_KNOB_TYPE_TILE_M);
    CHECK_EQ_INT(values[0], 128);
    /* beta has no knobs: NULL arrays are fine */
    CHECK_OK(dnnp_plan_list_get_engine_and_knobs(list, 1, &id, NULL, NULL, 0, &n));
    CHECK_EQ_INT(id, DNNP_ENGINE_ID_BUNDLED_BASE + 1);
    CHECK_EQ_SIZE(n, 0);
    /* the delegating entry has no replayable pair */
    CHECK_STATUS(dnnp_plan_list_get_engine_and_knobs(list, 2, &id, types, values, 4, &n),
                 DNNP_STATUS_NOT_SUPPORTED);
    CHECK_LAST_ERROR_CONTAINS("delegating");
    /* a backend config: raw backend knob 40 is TILE_M publicly */
    CHECK_OK(dnnp_plan_list_get_engine_and_knobs(list, 3, &id, types, values, 4, &n));
    CHECK_EQ_INT(id, 1);
    CHECK_EQ_SIZE(n, 1);
    CHECK_EQ_INT(types[0], DNNP_KNOB_TYPE_TILE_M);
    CHECK_EQ_INT(values[0], 128);
    /* out of range, NULL outputs */
    CHECK_STATUS(dnnp_plan_list_get_engine_and_knobs(list, 5, &id, types, values, 4, &n),
                 DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("out of range");
    CHECK_STATUS(dnnp_plan_list_get_engine_and_knobs(list, 0, NULL, types, values, 4, &n),
                 DNNP_STATUS_NULL_PARAMETER);
    {
        char buf[8];
        size_t needed = 0;
        CHECK_STATUS(dnnp_plan_list_get_plan_name(list, 0, buf, sizeof buf, &needed),
                     DNNP_STATUS_BUFFER_TOO_SMALL);
        CHECK_EQ_SIZE(needed, strlen("alpha[TILE_M=128]") + 1);
        CHECK_STATUS(dnnp_plan_list_get_plan_name(list, 9, buf, sizeof buf, &needed),
                     DNNP_STATUS_BAD_PARAM);
    }
    dnnp_plan_list_destroy(list);
}

static void no_device_means_backend_only(void) {
    /* without a device every stand-in engine declines (needs SM90), so only backend plans remain */
    static const char *const NAMES[] = {"eng1_k40=128", "eng2", "eng3_k0=2"};
    dnnp_plan_list_t *list = plan_test_list("{\"ops\": [\"exp\"], \"backend\": " PLAN_TEST_BACKEND "}");
    size_t count = 0;
    CHECK_OK(dnnp_plan_list_create_execution_plans(list, NULL, 0));
    plan_test_names(list, NAMES, 3);
    dnnp_plan_list_destroy(list);
    /* and with no backend either, nothing can run: every reason is in the message */
    list = plan_test_list("{\"ops\": [\"exp\"]}");
    CHECK_STATUS(dnnp_plan_list_create_execution_plans(list, NULL, 0), DNNP_STATUS_NOT_SUPPORTED);
    CHECK_LAST_ERROR_CONTAINS("the backend declined");
    CHECK_LAST_ERROR_CONTAINS("alpha: requires SM90");
    CHECK_OK(dnnp_plan_list_get_count(list, &count));
    CHECK_EQ_SIZE(count, 0);
    dnnp_plan_list_destroy(list);
}

int main(void) {
    lead_and_trail();
    modes_in_caller_order();
    engine_and_knobs();
    no_device_means_backend_only();
    dnnp_plan_list_destroy(NULL);
    return 0;
}
