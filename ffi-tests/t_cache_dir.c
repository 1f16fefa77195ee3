/* dnnp_compiled_cache_dir: DNNPLAN_COMPILED_CACHE and DNNPLAN_DISABLE_COMPILED_CACHE are honoured,
 * two-call string protocol. (The cache reads its configuration once, at first use.) */
#define _POSIX_C_SOURCE 200112L
#include <stdlib.h>
#include <string.h>

#include "common.h"

int main(void) {
    char buf[512];
    char tiny[4] = {'x', 'x', 'x', 'x'};
    size_t needed = 0;
    int32_t enabled = -1;
    const char *root = "/tmp/dnnplan-ffi-test-cache-root";

    CHECK(setenv("DNNPLAN_COMPILED_CACHE", root, 1) == 0);
    CHECK(setenv("DNNPLAN_DISABLE_COMPILED_CACHE", "yes", 1) == 0);

    /* Size query: NULL buffer. */
    CHECK_STATUS(dnnp_compiled_cache_dir(NULL, 0, &needed, NULL), DNNP_STATUS_BUFFER_TOO_SMALL);
    CHECK_EQ_SIZE(needed, strlen(root) + 1);
    /* Too small: untouched, size reported, enabled not written. */
    CHECK_STATUS(dnnp_compiled_cache_dir(tiny, sizeof tiny, &needed, &enabled),
                 DNNP_STATUS_BUFFER_TOO_SMALL);
    CHECK(tiny[0] == 'x');
    CHECK_EQ_INT(enabled, -1);
    /* Nowhere to write anything. */
    CHECK_STATUS(dnnp_compiled_cache_dir(NULL, 0, NULL, NULL), DNNP_STATUS_NULL_PARAMETER);

    CHECK_OK(dnnp_compiled_cache_dir(buf, sizeof buf, &needed, &enabled));
    CHECK_STR_EQ(buf, root);
    CHECK_EQ_SIZE(needed, strlen(root) + 1);
    CHECK_EQ_INT(enabled, 0);
    return 0;
}
