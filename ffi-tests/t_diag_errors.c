/* Status names, the two-call last-error string protocol, and a panic contained at the boundary. */
#include <string.h>

#include "common.h"

static const struct {
    dnnp_status_t code;
    const char *name;
} STATUSES[] = {
    {DNNP_STATUS_SUCCESS, "DNNP_STATUS_SUCCESS"},
    {DNNP_STATUS_CUDA_UNAVAILABLE, "DNNP_STATUS_CUDA_UNAVAILABLE"},
    {DNNP_STATUS_CUDNN_UNAVAILABLE, "DNNP_STATUS_CUDNN_UNAVAILABLE"},
    {DNNP_STATUS_BAD_PARAM, "DNNP_STATUS_BAD_PARAM"},
    {DNNP_STATUS_NULL_PARAMETER, "DNNP_STATUS_NULL_PARAMETER"},
    {DNNP_STATUS_BUFFER_TOO_SMALL, "DNNP_STATUS_BUFFER_TOO_SMALL"},
    {DNNP_STATUS_INVALID_GRAPH, "DNNP_STATUS_INVALID_GRAPH"},
    {DNNP_STATUS_INVALID_STATE, "DNNP_STATUS_INVALID_STATE"},
    {DNNP_STATUS_NOT_FOUND, "DNNP_STATUS_NOT_FOUND"},
    {DNNP_STATUS_NOT_SUPPORTED, "DNNP_STATUS_NOT_SUPPORTED"},
    {DNNP_STATUS_INTERNAL, "DNNP_STATUS_INTERNAL"},
    {DNNP_STATUS_INTERNAL_PANIC, "DNNP_STATUS_INTERNAL_PANIC"},
    {DNNP_STATUS_IO_ERROR, "DNNP_STATUS_IO_ERROR"},
    {DNNP_STATUS_EXECUTION_FAILED, "DNNP_STATUS_EXECUTION_FAILED"},
    {DNNP_STATUS_CUDA_ERROR, "DNNP_STATUS_CUDA_ERROR"},
    {DNNP_STATUS_CUDNN_ERROR, "DNNP_STATUS_CUDNN_ERROR"},
};

static void status_names(void) {
    size_t i;
    for (i = 0; i < sizeof STATUSES / sizeof STATUSES[0]; ++i) {
        CHECK_STR_EQ(dnnp_status_name(STATUSES[i].code), STATUSES[i].name);
    }
    /* Values that are not status codes, including neighbours of real ones. */
    CHECK_STR_EQ(dnnp_status_name(-1), "DNNP_STATUS_UNKNOWN");
    CHECK_STR_EQ(dnnp_status_name(1), "DNNP_STATUS_UNKNOWN");
    CHECK_STR_EQ(dnnp_status_name(1999), "DNNP_STATUS_UNKNOWN");
    CHECK_STR_EQ(dnnp_status_name(4003), "DNNP_STATUS_UNKNOWN");
    CHECK_STR_EQ(dnnp_status_name(INT32_MAX), "DNNP_STATUS_UNKNOWN");
    CHECK_STR_EQ(dnnp_status_name(INT32_MIN), "DNNP_STATUS_UNKNOWN");
}

/* A panic inside an entry point becomes DNNP_STATUS_INTERNAL_PANIC with the panic text. */
static void forced_panic(void) {
    CHECK_STATUS(dnnp_debug_force_panic("boom from t_diag_errors"), DNNP_STATUS_INTERNAL_PANIC);
    CHECK_LAST_ERROR_CONTAINS("boom from t_diag_errors");
    CHECK_LAST_ERROR_CONTAINS("panic");
    /* NULL message: still contained, with a default text. */
    CHECK_STATUS(dnnp_debug_force_panic(NULL), DNNP_STATUS_INTERNAL_PANIC);
    CHECK_LAST_ERROR_CONTAINS("forced panic");
}

static void last_error_protocol(void) {
    const char *text = "needle-7f3a: a message long enough to need a real buffer";
    size_t len, needed = 0;
    char small[8];
    char *exact;
    char big[512];

    CHECK_STATUS(dnnp_debug_force_panic(text), DNNP_STATUS_INTERNAL_PANIC);

    /* Size query: NULL buffer, needed gets length + NUL. */
    CHECK_STATUS(dnnp_get_last_error_string(NULL, 0, &needed), DNNP_STATUS_BUFFER_TOO_SMALL);
    CHECK(needed > strlen(text));
    len = needed - 1;

    /* NULL buffer and NULL needed: nothing to report into. */
    CHECK_STATUS(dnnp_get_last_error_string(NULL, 0, NULL), DNNP_STATUS_NULL_PARAMETER);

    /* Too small: nothing copied (buffer untouched), needed reported again. */
    memset(small, 'x', sizeof small);
    needed = 0;
    CHECK_STATUS(dnnp_get_last_error_string(small, sizeof small, &needed),
                 DNNP_STATUS_BUFFER_TOO_SMALL);
    CHECK_EQ_SIZE(needed, len + 1);
    CHECK(memcmp(small, "xxxxxxxx", sizeof small) == 0);

    /* One byte short of the NUL. */
    exact = (char *)malloc(len + 1);
    CHECK(exact != NULL);
    needed = 0;
    CHECK_STATUS(dnnp_get_last_error_string(exact, len, &needed), DNNP_STATUS_BUFFER_TOO_SMALL);
    CHECK_EQ_SIZE(needed, len + 1);

    /* Exact fit: the whole message, NUL-terminated. */
    needed = 0;
    CHECK_OK(dnnp_get_last_error_string(exact, len + 1, &needed));
    CHECK_EQ_SIZE(needed, len + 1);
    CHECK_EQ_SIZE(strlen(exact), len);
    CHECK_STR_CONTAINS(exact, text);

    /* Reading does not consume or replace the message; `needed` may be NULL. */
    CHECK_OK(dnnp_get_last_error_string(big, sizeof big, NULL));
    CHECK_STR_EQ(big, exact);
    CHECK_OK(dnnp_get_last_error_string(big, sizeof big, &needed));
    CHECK_STR_EQ(big, exact);
    free(exact);
}

int main(void) {
    char buf[16];
    size_t needed = 99;

    /* Fresh thread: the last-error message is empty (just the NUL). */
    CHECK_OK(dnnp_get_last_error_string(buf, sizeof buf, &needed));
    CHECK_EQ_SIZE(needed, 1);
    CHECK_STR_EQ(buf, "");

    status_names();
    forced_panic();
    last_error_protocol();
    return 0;
}
