/* dnnp_engine_id_describe: any engine id decodes with nothing registered (backend band, reserved
 * C++ OSS band, bundled family blocks, the two sentinels), through the two-call string protocol. */
#include <stdlib.h>
#include <string.h>

#include "common.h"

static char *describe(int64_t id) {
    size_t needed = 0;
    char *buf;
    CHECK_STATUS(dnnp_engine_id_describe(id, NULL, 0, &needed), DNNP_STATUS_BUFFER_TOO_SMALL);
    buf = (char *)malloc(needed);
    CHECK(buf != NULL);
    CHECK_OK(dnnp_engine_id_describe(id, buf, needed, NULL));
    return buf;
}

static void expect(int64_t id, const char *a, const char *b) {
    char *json = describe(id);
    CHECK_STR_CONTAINS(json, a);
    if (b != NULL) {
        CHECK_STR_CONTAINS(json, b);
    }
    free(json);
}

int main(void) {
    expect(7, "\"engine_id\":7", "\"class\":\"backend\"");
    expect(DNNP_ENGINE_ID_CPP_OSS_BASE + 5, "\"class\":\"cpp_oss\"", NULL);
    expect(DNNP_ENGINE_ID_BACKEND_HEURISTIC, "\"class\":\"delegating\"", "no replayable knobs");
    expect(-2, "\"class\":\"marker\"", NULL);
    expect(-3, "\"class\":\"invalid\"", NULL);
    /* the reference's family blocks keep their bases: 20100 is gdn, 20517 the SM90 SDPA row */
    expect(20100, "\"class\":\"bundled\"", "\"family\":\"gdn\"");
    expect(20517, "\"class\":\"bundled\"", "\"family\":\"frost_sdpa_fwd\"");
    expect(DNNP_ENGINE_ID_BUNDLED_BASE + 99 * DNNP_ENGINE_ID_FAMILY_BLOCK, "no family owns block",
           NULL);
    {
        char small[8];
        size_t needed = 0;
        CHECK_STATUS(dnnp_engine_id_describe(7, small, sizeof small, &needed),
                     DNNP_STATUS_BUFFER_TOO_SMALL);
        CHECK(needed > sizeof small);
    }
    return 0;
}
