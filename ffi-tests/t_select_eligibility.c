/* dnnp_attention_eligibility: the two-call JSON protocol and golden verdicts (spec 9.2 rows 7
 * and 19, an eligible request, and the engine row made available through the environment). */
#include <string.h>

#include "common.h"

/* Runs the selector with the two-call pattern; returns a malloc'd document (caller frees). */
static char *eligibility(const char *request, const char *env) {
    size_t needed = 0;
    char *doc;
    CHECK_STATUS(dnnp_attention_eligibility(request, env, NULL, 0, &needed),
                 DNNP_STATUS_BUFFER_TOO_SMALL);
    CHECK(needed > 2);
    doc = (char *)malloc(needed);
    CHECK(doc != NULL);
    CHECK_OK(dnnp_attention_eligibility(request, env, doc, needed, &needed));
    CHECK_EQ_SIZE(strlen(doc) + 1, needed);
    return doc;
}

static void padding_on_9_5_1_needs_9_6_0(void) {
    const char *req =
        "{\"dtype\":\"bf16\",\"layout\":\"bshd_bshd_bshd\",\"mask\":\"padding\",\"window\":[-1,-1],"
        "\"b\":2,\"h_q\":32,\"h_kv\":8,\"s_q\":4096,\"d_qk\":128}";
    char *doc = eligibility(req, "{\"sm\":90,\"cudnn\":\"9.5.1\"}");
    CHECK_STR_CONTAINS(doc, "\"schema\":\"dnnplan.attention_eligibility/1\"");
    CHECK_STR_CONTAINS(doc, "\"rule\":\"F16.WINDOW\"");
    CHECK_STR_CONTAINS(doc, "requires cuDNN >= 9.6.0");
    CHECK_STR_CONTAINS(doc, "\"te_backend\":\"NVTE_No_Backend\"");
    CHECK_STR_CONTAINS(doc, "\"selected\":\"reference.unfused\"");
    free(doc);

    /* The same request on 9.6.0 (given as a raw cudnnGetVersion() integer) is eligible. */
    doc = eligibility(req, "{\"sm\":90,\"cudnn\":90600}");
    CHECK_STR_CONTAINS(doc, "\"te_backend\":\"NVTE_F16_arbitrary_seqlen\"");
    CHECK_STR_CONTAINS(doc, "\"selected\":\"cudnn.f16_arbitrary_seqlen\"");
    CHECK(strstr(doc, "F16.WINDOW") == NULL);
    free(doc);
}

static void fp8_deterministic_training(void) {
    const char *req =
        "{\"dtype\":\"fp8_e4m3\",\"mask\":\"causal\",\"training\":true,\"deterministic\":true,"
        "\"h_q\":32,\"h_kv\":8,\"s_q\":4096,\"d_qk\":128}";
    char *doc = eligibility(req, "{\"sm\":90,\"cudnn\":\"9.8.0\",\"engines\":[]}");
    CHECK_STR_CONTAINS(doc, "\"rule\":\"FW.DET_FP8\"");
    CHECK_STR_CONTAINS(doc, "requires cuDNN >= 9.19.0");
    /* TE's own rule still picks FP8: the determinism filter is a framework layer. */
    CHECK_STR_CONTAINS(doc, "\"te_backend\":\"NVTE_FP8\"");
    free(doc);
}

static void engine_row_when_available(void) {
    const char *req = "{\"mask\":\"causal\",\"h_q\":16,\"s_q\":4096,\"d_qk\":512}";
    char *doc = eligibility(req, "{\"sm\":90,\"cudnn\":\"9.19.0\",\"engines\":[\"all\"]}");
    CHECK_STR_CONTAINS(doc, "\"order\":[\"engine.sdpa_fwd_prefill_sm90\",\"cudnn.f16_arbitrary_seqlen\"");
    CHECK_STR_CONTAINS(doc, "\"engine_id\":20517");
    free(doc);
    /* By default the row is not bundled: rejected with a setting hint. */
    doc = eligibility(req, "{\"sm\":90,\"cudnn\":\"9.19.0\"}");
    CHECK_STR_CONTAINS(doc, "\"rule\":\"ENGINE.AVAILABLE\"");
    CHECK_STR_CONTAINS(doc, "\"kind\":\"setting\"");
    free(doc);
}

int main(void) {
    padding_on_9_5_1_needs_9_6_0();
    fp8_deterministic_training();
    engine_row_when_available();
    return 0;
}
