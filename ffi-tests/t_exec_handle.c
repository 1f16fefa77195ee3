/* dnnp_handle_t: wraps a caller's stream; on a machine without a CUDA driver nothing is queried and
 * the device is unknown (-1); the per-thread sentinel is refused; NULL arguments are refused. */
#include "common.h"

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

    {
        /* A bogus stream: without a driver it is carried as is (device unknown); with a driver the
         * stream query fails and that is an error, never a fallback to another stream. */
        dnnp_status_t s = dnnp_handle_create((void *)0x1234, &h);
        if (s == DNNP_STATUS_SUCCESS) {
            CHECK_OK(dnnp_handle_get_stream(h, &stream));
            CHECK(stream == (void *)0x1234);
            CHECK_OK(dnnp_handle_get_device(h, &device));
            CHECK_EQ_INT(device, -1);
            dnnp_handle_destroy(h);
            h = NULL;
        } else {
            CHECK_EQ_INT(s, DNNP_STATUS_CUDA_ERROR);
            CHECK_LAST_ERROR_CONTAINS("cuStreamGetCtx");
            CHECK(h == NULL);
        }
    }

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
