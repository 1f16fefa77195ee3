/* dnnp_compiled_cache_stats: struct_size versioning, NULL and too-small sizes, reset. */
#include <stddef.h>
#include <string.h>

#include "common.h"

#define SENTINEL 0xA5A5A5A5A5A5A5A5ull

int main(void) {
    dnnp_cache_stats_t stats;
    unsigned char big[sizeof(dnnp_cache_stats_t) + 64];
    dnnp_cache_stats_t *future = (dnnp_cache_stats_t *)(void *)big;
    size_t i;

    CHECK_STATUS(dnnp_compiled_cache_stats(NULL), DNNP_STATUS_NULL_PARAMETER);
    CHECK_LAST_ERROR_CONTAINS("out");

    /* Too small: not even `hits` fits. Nothing is written. */
    memset(&stats, 0xA5, sizeof stats);
    stats.struct_size = sizeof(size_t);
    CHECK_STATUS(dnnp_compiled_cache_stats(&stats), DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("struct_size");
    CHECK_EQ_SIZE(stats.struct_size, sizeof(size_t));
    CHECK(stats.hits == SENTINEL);

    /* The current size: every field, all zero in a process that compiled nothing. */
    memset(&stats, 0xA5, sizeof stats);
    stats.struct_size = sizeof stats;
    CHECK_OK(dnnp_compiled_cache_stats(&stats));
    CHECK_EQ_SIZE(stats.struct_size, sizeof stats);
    CHECK(stats.hits == 0 && stats.misses == 0 && stats.bypassed == 0 && stats.invalid == 0);
    CHECK(stats.pruned == 0 && stats.export_failed == 0 && stats.memo_hits == 0);

    /* An older caller that knows only struct_size and hits: the rest is left untouched. */
    memset(&stats, 0xA5, sizeof stats);
    stats.struct_size = offsetof(dnnp_cache_stats_t, misses);
    CHECK_OK(dnnp_compiled_cache_stats(&stats));
    CHECK_EQ_SIZE(stats.struct_size, offsetof(dnnp_cache_stats_t, misses));
    CHECK(stats.hits == 0);
    CHECK(stats.misses == SENTINEL && stats.memo_hits == SENTINEL);

    /* A newer caller with a larger struct: we write what we know and say how much. */
    memset(big, 0x5A, sizeof big);
    future->struct_size = sizeof big;
    CHECK_OK(dnnp_compiled_cache_stats(future));
    CHECK_EQ_SIZE(future->struct_size, sizeof(dnnp_cache_stats_t));
    for (i = sizeof(dnnp_cache_stats_t); i < sizeof big; ++i) {
        CHECK(big[i] == 0x5A);
    }

    CHECK_OK(dnnp_compiled_cache_reset_stats());
    stats.struct_size = sizeof stats;
    CHECK_OK(dnnp_compiled_cache_stats(&stats));
    CHECK(stats.hits == 0 && stats.misses == 0);
    return 0;
}
