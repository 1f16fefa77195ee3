/*
 * dnnplan from C: check that the library loaded at run time is the one this program was
 * compiled against, and show the error-handling idiom every dnnplan call uses
 * (status code + dnnp_status_name + the thread's last-error message, two-call buffer sizing).
 * Exits 0 when everything behaves as documented.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dnnplan.h>

/* Prints "<what>: <STATUS_NAME>: <last error>" for a failed call; returns the status. */
static dnnp_status_t report(const char *what, dnnp_status_t status) {
    size_t needed = 0;
    char *message;
    if (status == DNNP_STATUS_SUCCESS) {
        return status;
    }
    /* Ask for the size first, then fetch the whole message. */
    if (dnnp_get_last_error_string(NULL, 0, &needed) != DNNP_STATUS_BUFFER_TOO_SMALL) {
        fprintf(stderr, "%s: %s\n", what, dnnp_status_name(status));
        return status;
    }
    message = (char *)malloc(needed);
    if (message != NULL && dnnp_get_last_error_string(message, needed, NULL) == DNNP_STATUS_SUCCESS) {
        fprintf(stderr, "%s: %s: %s\n", what, dnnp_status_name(status), message);
    }
    free(message);
    return status;
}

int main(void) {
    dnnp_status_t status;

    printf("compiled against dnnplan %d.%d.%d (ABI %s)\n", DNNP_VERSION_MAJOR, DNNP_VERSION_MINOR,
           DNNP_VERSION_PATCH, DNNP_ABI_VERSION);
    printf("running with     dnnplan %s (ABI %s)\n", dnnp_get_version_string(),
           dnnp_get_abi_version());
    /* Same ABI is what the SONAME guarantees; check it anyway, as a consumer should. */
    if (strcmp(dnnp_get_abi_version(), DNNP_ABI_VERSION) != 0) {
        fprintf(stderr, "ABI mismatch: header %s, library %s\n", DNNP_ABI_VERSION,
                dnnp_get_abi_version());
        return 1;
    }
    if (dnnp_get_version() < DNNP_VERSION) {
        fprintf(stderr, "library %lu is older than the header %d\n",
                (unsigned long)dnnp_get_version(), DNNP_VERSION);
        return 1;
    }

    /* A call that fails. dnnp_debug_force_panic is the library's test hook for its panic guard:
     * a bug inside dnnplan still comes back as a status code plus a message, never a crash. */
    status = report("dnnp_debug_force_panic", dnnp_debug_force_panic("example failure"));
    if (status != DNNP_STATUS_INTERNAL_PANIC) {
        fprintf(stderr, "expected DNNP_STATUS_INTERNAL_PANIC, got %s\n", dnnp_status_name(status));
        return 1;
    }
    /* Misuse of the error API itself is reported by status (and keeps the previous message). */
    status = dnnp_get_last_error_string(NULL, 0, NULL);
    if (status != DNNP_STATUS_NULL_PARAMETER) {
        fprintf(stderr, "expected DNNP_STATUS_NULL_PARAMETER, got %s\n", dnnp_status_name(status));
        return 1;
    }
    printf("status %d is %s\n", DNNP_STATUS_NOT_SUPPORTED, dnnp_status_name(DNNP_STATUS_NOT_SUPPORTED));
    return 0;
}
