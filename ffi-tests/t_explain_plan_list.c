/* dnnp_plan_list_explain: the JSON explanation of a plan list (family, facts, every engine with
 * accept or decline and its reason, the backend per mode, the ranked plans), also after a
 * planning that found nothing; the two-call string protocol. */
#include <stdlib.h>
#include <string.h>

#include "plan_common.h"

static char *explain(const dnnp_plan_list_t *list) {
    size_t needed = 0;
    char *buf;
    CHECK_STATUS(dnnp_plan_list_explain(list, NULL, 0, &needed), DNNP_STATUS_BUFFER_TOO_SMALL);
    CHECK(needed > 2);
    buf = (char *)malloc(needed);
    CHECK(buf != NULL);
    CHECK_OK(dnnp_plan_list_explain(list, buf, needed, &needed));
    CHECK_EQ_SIZE(strlen(buf) + 1, needed);
    return buf;
}

static void planned(void) {
    dnnp_plan_list_t *list = plan_test_list(
        "{\"ops\": [\"exp\", \"cos\"], \"arch\": 90, \"backend\": " PLAN_TEST_BACKEND "}");
    char *json;
    CHECK_OK(dnnp_plan_list_create_execution_plans(list, NULL, 0));
    json = explain(list);
    CHECK_STR_CONTAINS(json, "\"family\":{\"name\":\"ranked\"");
    CHECK_STR_CONTAINS(json, "\"facts\":{\"trail\":false,\"wide\":true}");
    /* beta declines wide graphs, gamma needs SM100, delta is opt-in */
    CHECK_STR_CONTAINS(json, "\"engine\":\"alpha\",\"engine_id\":20000,\"offered\":true,\"verdict\":\"accept\"");
    CHECK_STR_CONTAINS(json, "wide graphs are not served");
    CHECK_STR_CONTAINS(json, "requires SM100-109; current device is SM90");
    CHECK_STR_CONTAINS(json, "\"engine\":\"delta\",\"engine_id\":20004,\"offered\":false");
    CHECK_STR_CONTAINS(json, "\"mode\":\"A\",\"verdict\":\"ok\",\"configs\":2,\"new_entries\":2");
    CHECK_STR_CONTAINS(json, "\"mode\":\"FALLBACK\",\"verdict\":\"ok\",\"configs\":2,\"new_entries\":1");
    CHECK_STR_CONTAINS(json, "\"index\":0,\"name\":\"alpha[TILE_M=128]\"");
    CHECK_STR_CONTAINS(json, "\"error\":null");
    free(json);
    dnnp_plan_list_destroy(list);
}

static void nothing_runs(void) {
    dnnp_plan_list_t *list = plan_test_list("{\"ops\": [\"exp\"]}");
    char *json;
    CHECK_STATUS(dnnp_plan_list_create_execution_plans(list, NULL, 0), DNNP_STATUS_NOT_SUPPORTED);
    json = explain(list);
    CHECK_STR_CONTAINS(json, "\"plans\":[]");
    CHECK_STR_CONTAINS(json, "no CUDA device (the stand-in script names no device)");
    CHECK_STR_CONTAINS(json, "\"verdict\":\"decline\",\"reason\":\"cuDNN is not loaded: the stand-in script names no backend\"");
    CHECK_STR_CONTAINS(json, "\"error\":\"not supported: no engine");
    free(json);
    {
        char small[4];
        CHECK_STATUS(dnnp_plan_list_explain(list, small, sizeof small, NULL),
                     DNNP_STATUS_BUFFER_TOO_SMALL);
        CHECK_STATUS(dnnp_plan_list_explain(NULL, small, sizeof small, NULL),
                     DNNP_STATUS_NULL_PARAMETER);
    }
    dnnp_plan_list_destroy(list);
}

int main(void) {
    planned();
    nothing_runs();
    return 0;
}
