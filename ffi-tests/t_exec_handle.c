/* dnnp_handle_t: wraps a caller's stream; on a machine without a CUDA driver nothing is queried and
 * the device is unknown (-1); the per-thread sentinel is refused; NULL arguments are refused. */
#include <dlfcn.h>

#include "common.h"

/* Whether a CUDA driver library can be loaded here (then a bogus stream must not be passed: the
 * driver may dereference it). */
static int have_driver(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        lib = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
    }
    if (lib != NULL) {
        dlclose(lib);
        return 1;
    }
    return 0;
}

int main(void) {
    dnnp_handle_t *h = NULL;
    void *stream = NULL;
    int32_t device = 7;

    /* NULL stream = legacy default stream. */
    CHECK_OK(dnnp_handle_create(NULL, &h));
    CHECK(h != NULL);
    CHECK_OK(dnnp_handle_get_stream(h, &stream));
    CHECK(stream == NULL);
    CHECK_OK(dnnp_handle_get_device(h, &device));
    dnnp_handle_destroy(h);
    h = NULL;

    if (!have_driver()) {
        /* Without a driver a stream token is carried as is and nothing is queried. */
        CHECK_OK(dnnp_handle_create((void *)0x1234, &h));
        CHECK_OK(dnnp_handle_get_stream(h, &stream));
        CHECK(stream == (void *)0x1234);
        CHECK_OK(dnnp_handle_get_device(h, &device));
        CHECK_EQ_INT(device, -1);
        dnnp_handle_destroy(h);
        h = NULL;
    }

    /* An explicit device for the legacy default stream. */
    if (!have_driver()) {
        CHECK_OK(dnnp_handle_create_on_device(2, NULL, &h));
        CHECK_OK(dnnp_handle_get_device(h, &device));
        CHECK_EQ_INT(device, 2);
        dnnp_handle_destroy(h);
        h = NULL;
    }
    CHECK_STATUS(dnnp_handle_create_on_device(-1, NULL, &h), DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("negative");
    CHECK(h == NULL);
    CHECK_STATUS(dnnp_handle_create_on_device(0, NULL, NULL), DNNP_STATUS_NULL_PARAMETER);

    /* CU_STREAM_PER_THREAD is refused and *out untouched. */
    CHECK_STATUS(dnnp_handle_create((void *)2, &h), DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("CU_STREAM_PER_THREAD");
    CHECK(h == NULL);

    CHECK_STATUS(dnnp_handle_create(NULL, NULL), DNNP_STATUS_NULL_PARAMETER);
    CHECK_LAST_ERROR_CONTAINS("out");
    CHECK_STATUS(dnnp_handle_get_stream(NULL, &stream), DNNP_STATUS_NULL_PARAMETER);
    CHECK_LAST_ERROR_CONTAINS("handle");
    CHECK_STATUS(dnnp_handle_get_device(NULL, &device), DNNP_STATUS_NULL_PARAMETER);
    dnnp_handle_destroy(NULL);
    return 0;
}
