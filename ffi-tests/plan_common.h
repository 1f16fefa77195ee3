/*
 * Shared helpers of the plan-list C tests (t_plan_*.c, t_explain_*.c): plan lists over dnnplan's
 * stand-in engines and a scripted fake backend (dnnp_debug_plan_list_create_stand_in), and name
 * checks. The stand-in manifest: family "ranked" (anchor op exp; engines alpha 20000 with
 * TILE_M in {64,128}, beta 20001, gamma 20002 SM100-only, delta 20004 opt-in; the hook proposes
 * A = alpha[TILE_M=128], beta and FALLBACK = beta, alpha[TILE_M=64], the backend block after
 * ours, or before with op sin), family "unranked" (anchor sqrt; norm_broken_build 21200 declines
 * at build, norm_sm100 21201, norm_sm90 21202).
 */
#ifndef DNNPLAN_FFI_TESTS_PLAN_COMMON_H
#define DNNPLAN_FFI_TESTS_PLAN_COMMON_H

#include "common.h"

/* Backend A = {eng1 (raw knob 40 = TILE_M = 128), eng2}, FALLBACK = {eng3 (raw knob 0 = 2),
 * eng1 again}, B = {eng4}. */
#define PLAN_TEST_BACKEND                                                                   \
    "{\"engine_count\": 5, \"modes\": {\"A\": [[1, [[40, 128]]], [2, []]],"                 \
    " \"FALLBACK\": [[3, [[0, 2]]], [1, [[40, 128]]]], \"B\": [[4, []]]}}"

static inline dnnp_plan_list_t *plan_test_list(const char *script) {
    dnnp_plan_list_t *list = NULL;
    CHECK_OK(dnnp_debug_plan_list_create_stand_in(script, &list));
    CHECK(list != NULL);
    return list;
}

/* Checks the name of plan `index`, with the two-call string protocol. */
#define CHECK_PLAN_NAME(list, index, expected)                                              \
    do {                                                                                    \
        char name_buf_[256];                                                                \
        size_t name_needed_ = 0;                                                            \
        CHECK_STATUS(dnnp_plan_list_get_plan_name((list), (index), NULL, 0, &name_needed_), \
                     DNNP_STATUS_BUFFER_TOO_SMALL);                                         \
        CHECK_EQ_SIZE(name_needed_, strlen(expected) + 1);                                  \
        CHECK_OK(dnnp_plan_list_get_plan_name((list), (index), name_buf_, sizeof name_buf_, \
                                              &name_needed_));                              \
        CHECK_STR_EQ(name_buf_, (expected));                                                \
    } while (0)

/* Checks every plan name of a list, in order. */
static inline void plan_test_names(const dnnp_plan_list_t *list, const char *const *names,
                                   size_t n) {
    size_t count = 0, i;
    CHECK_OK(dnnp_plan_list_get_count(list, &count));
    CHECK_EQ_SIZE(count, n);
    for (i = 0; i < n; ++i) {
        CHECK_PLAN_NAME(list, i, names[i]);
    }
}

#endif
