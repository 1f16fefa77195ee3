/* The compile-time version macros of include/dnnplan.h equal what the loaded library reports. */
#include <stdio.h>

#include "common.h"

int main(void) {
    char expected[64];
    const char *abi = dnnp_get_abi_version();
    const char *version = dnnp_get_version_string();

    CHECK_EQ_SIZE(dnnp_get_version(), DNNP_VERSION);
    CHECK_EQ_INT(DNNP_VERSION,
                 DNNP_VERSION_MAJOR * 10000 + DNNP_VERSION_MINOR * 100 + DNNP_VERSION_PATCH);

    snprintf(expected, sizeof expected, "%d.%d.%d", DNNP_VERSION_MAJOR, DNNP_VERSION_MINOR,
             DNNP_VERSION_PATCH);
    CHECK_STR_EQ(version, expected);

    /* The ABI version is the SONAME suffix: "0.<minor>" while the major version is 0. */
    CHECK_STR_EQ(abi, DNNP_ABI_VERSION);
    if (DNNP_VERSION_MAJOR == 0) {
        snprintf(expected, sizeof expected, "0.%d", DNNP_VERSION_MINOR);
    } else {
        snprintf(expected, sizeof expected, "%d", DNNP_VERSION_MAJOR);
    }
    CHECK_STR_EQ(abi, expected);

    /* Static strings: the same pointer on every call. */
    CHECK(dnnp_get_version_string() == version);
    CHECK(dnnp_get_abi_version() == abi);
    return 0;
}
