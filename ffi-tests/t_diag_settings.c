/* dnnp_settings_json: what dnnplan makes of this process's DNNPLAN_* variables (a value it reads,
 * one it does not understand, a misspelt name with the one it meant), the catalogue of every
 * variable it reads, and the two-call buffer protocol. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "common.h"

static char *settings_json(void) {
    size_t needed = 0;
    char *doc;
    char small[4];
    CHECK_STATUS(dnnp_settings_json(NULL, 0, &needed), DNNP_STATUS_BUFFER_TOO_SMALL);
    CHECK(needed > 2);
    CHECK_STATUS(dnnp_settings_json(small, sizeof small, NULL), DNNP_STATUS_BUFFER_TOO_SMALL);
    doc = (char *)malloc(needed);
    CHECK(doc != NULL);
    CHECK_OK(dnnp_settings_json(doc, needed, &needed));
    CHECK_EQ_SIZE(strlen(doc) + 1, needed);
    return doc;
}

int main(void) {
    char *doc;
    CHECK(setenv("DNNPLAN_GDN_BWD_TOKENS", "tw7", 1) == 0);
    CHECK(setenv("DNNPLAN_GDN_FWD_SCAN", "w9", 1) == 0);
    CHECK(setenv("DNNPLAN_GDN_FWD_SACN", "w8", 1) == 0);
    doc = settings_json();
    CHECK_STR_CONTAINS(doc, "\"schema\":\"dnnplan.settings/1\"");
    /* set: each variable with its verdict */
    CHECK_STR_CONTAINS(doc, "{\"name\":\"DNNPLAN_GDN_BWD_TOKENS\",\"value\":\"tw7\",\"status\":\"ok\"}");
    CHECK_STR_CONTAINS(doc, "{\"name\":\"DNNPLAN_GDN_FWD_SCAN\",\"value\":\"w9\",\"status\":\"not understood");
    CHECK_STR_CONTAINS(doc, "\"accepts\":\"one of w4|w8|");
    CHECK_STR_CONTAINS(doc, "{\"name\":\"DNNPLAN_GDN_FWD_SACN\",\"value\":\"w8\",\"status\":\"unknown");
    CHECK_STR_CONTAINS(doc, "\"did_you_mean\":\"DNNPLAN_GDN_FWD_SCAN\"}");
    /* cargo's own build-time variables (set when cargo runs this test) are not reported */
    CHECK(strstr(doc, "\"name\":\"DNNPLAN_ABI_VERSION\"") == NULL);
    /* known: the catalogue, with what each accepts */
    CHECK_STR_CONTAINS(doc, "{\"name\":\"DNNPLAN_CUDNN_LIB_DIR\",\"accepts\":\"a path\",\"effect\":");
    free(doc);

    /* the environment is read at each call */
    CHECK(unsetenv("DNNPLAN_GDN_FWD_SACN") == 0);
    doc = settings_json();
    CHECK(strstr(doc, "DNNPLAN_GDN_FWD_SACN") == NULL);
    free(doc);
    return 0;
}
