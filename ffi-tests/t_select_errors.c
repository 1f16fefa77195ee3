/* dnnp_attention_eligibility: NULL arguments, malformed JSON, ill-formed requests, short buffers
 * (never written), and environment detection without a device. */
#include <string.h>

#include "common.h"

static const char *ENV90 = "{\"sm\":90,\"cudnn\":\"9.8.0\"}";

static void null_and_malformed(void) {
    char buf[64];
    size_t needed = 0;
    CHECK_STATUS(dnnp_attention_eligibility(NULL, ENV90, buf, sizeof buf, &needed),
                 DNNP_STATUS_NULL_PARAMETER);
    CHECK_LAST_ERROR_CONTAINS("request_json");
    CHECK_STATUS(dnnp_attention_eligibility("{\"h_q\":", ENV90, buf, sizeof buf, &needed),
                 DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("request JSON");
    CHECK_STATUS(dnnp_attention_eligibility("{\"s_q\":128,\"d_qk\":64}", ENV90, buf, sizeof buf,
                                            &needed),
                 DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("request.h_q");
    CHECK_STATUS(dnnp_attention_eligibility("{\"h_q\":8,\"s_q\":128,\"d_qk\":64,\"mask\":\"diag\"}",
                                            ENV90, buf, sizeof buf, &needed),
                 DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("diag");
    CHECK_STATUS(dnnp_attention_eligibility("{\"h_q\":8,\"s_q\":128,\"d_qk\":64,\"colour\":1}",
                                            ENV90, buf, sizeof buf, &needed),
                 DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("colour");
    CHECK_STATUS(dnnp_attention_eligibility("{\"h_q\":8,\"s_q\":128,\"d_qk\":64}",
                                            "{\"sm\":90,\"cudnn\":\"nine\"}", buf, sizeof buf,
                                            &needed),
                 DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("environment JSON");
}

static void ill_formed_requests(void) {
    char buf[64];
    size_t needed = 0;
    /* Spec 9.2 row 26: h_q % h_kv != 0 is a validity error naming the rule. */
    CHECK_STATUS(dnnp_attention_eligibility("{\"h_q\":12,\"h_kv\":5,\"s_q\":128,\"d_qk\":64}",
                                            ENV90, buf, sizeof buf, &needed),
                 DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("h_q % h_kv");
    CHECK_STATUS(dnnp_attention_eligibility(
                     "{\"h_q\":8,\"s_q\":128,\"d_qk\":64,\"dropout\":1.0}", ENV90, buf,
                     sizeof buf, &needed),
                 DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("dropout");
    CHECK_STATUS(dnnp_attention_eligibility(
                     "{\"h_q\":8,\"s_q\":128,\"d_qk\":64,\"window\":[-1,7]}", ENV90, buf,
                     sizeof buf, &needed),
                 DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("window");
}

static void short_buffer_is_not_written(void) {
    char small[16];
    size_t needed = 0;
    memset(small, 'x', sizeof small);
    CHECK_STATUS(dnnp_attention_eligibility("{\"h_q\":8,\"s_q\":128,\"d_qk\":64}", ENV90, small,
                                            sizeof small, &needed),
                 DNNP_STATUS_BUFFER_TOO_SMALL);
    CHECK(needed > sizeof small);
    CHECK(small[0] == 'x' && small[sizeof small - 1] == 'x');
    /* NULL buffer and NULL needed: nothing to report the size into. */
    CHECK_STATUS(dnnp_attention_eligibility("{\"h_q\":8,\"s_q\":128,\"d_qk\":64}", ENV90, NULL,
                                            0, NULL),
                 DNNP_STATUS_NULL_PARAMETER);
}

static void detection(void) {
    size_t needed = 0;
    /* No environment: the architecture is detected. Without a GPU this is a clear error. */
    dnnp_status_t s =
        dnnp_attention_eligibility("{\"h_q\":8,\"s_q\":128,\"d_qk\":64}", NULL, NULL, 0, &needed);
    if (s == DNNP_STATUS_CUDA_UNAVAILABLE) {
        CHECK_LAST_ERROR_CONTAINS("architecture");
    } else {
        CHECK_STATUS(s, DNNP_STATUS_BUFFER_TOO_SMALL);
        CHECK(needed > 2);
    }
    /* Partial environment: the stated architecture, cuDNN detected (or absent). */
    CHECK_STATUS(dnnp_attention_eligibility("{\"h_q\":8,\"s_q\":128,\"d_qk\":64}", "{\"sm\":90}",
                                            NULL, 0, &needed),
                 DNNP_STATUS_BUFFER_TOO_SMALL);
}

int main(void) {
    null_and_malformed();
    ill_formed_requests();
    short_buffer_is_not_written();
    detection();
    return 0;
}
