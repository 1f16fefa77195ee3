/* dnnp_compiled_cache_dir without DNNPLAN_COMPILED_CACHE: $XDG_CACHE_HOME/dnnplan/compiled_plans,
 * enabled by default. */
#define _POSIX_C_SOURCE 200112L
#include <stdlib.h>

#include "common.h"

int main(void) {
    char buf[512];
    int32_t enabled = -1;

    CHECK(unsetenv("DNNPLAN_COMPILED_CACHE") == 0);
    CHECK(unsetenv("DNNPLAN_DISABLE_COMPILED_CACHE") == 0);
    CHECK(setenv("XDG_CACHE_HOME", "/tmp/dnnplan-ffi-test-xdg", 1) == 0);
    CHECK_OK(dnnp_compiled_cache_dir(buf, sizeof buf, NULL, &enabled));
    CHECK_STR_EQ(buf, "/tmp/dnnplan-ffi-test-xdg/dnnplan/compiled_plans");
    CHECK_EQ_INT(enabled, 1);
    return 0;
}
