/*
 * The last-error message is per thread: threads that fail concurrently each read back their own
 * message, and the main thread's message is untouched. Each thread also repeats the failure many
 * times, so a per-call or per-thread leak shows up as "definitely lost" under valgrind.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

#define THREADS 4
#define ROUNDS 50

static void *worker(void *arg) {
    int id = *(const int *)arg;
    char mine[64];
    char got[128];
    int round;
    for (round = 0; round < ROUNDS; ++round) {
        snprintf(mine, sizeof mine, "thread-%d-round-%d", id, round);
        CHECK_STATUS(dnnp_debug_force_panic(mine), DNNP_STATUS_INTERNAL_PANIC);
        CHECK_OK(dnnp_get_last_error_string(got, sizeof got, NULL));
        CHECK_STR_CONTAINS(got, mine);
    }
    return NULL;
}

int main(void) {
    pthread_t threads[THREADS];
    int ids[THREADS];
    int i;

    CHECK_STATUS(dnnp_debug_force_panic("main-thread-message"), DNNP_STATUS_INTERNAL_PANIC);
    for (i = 0; i < THREADS; ++i) {
        ids[i] = i;
        CHECK(pthread_create(&threads[i], NULL, worker, &ids[i]) == 0);
    }
    for (i = 0; i < THREADS; ++i) {
        CHECK(pthread_join(threads[i], NULL) == 0);
    }
    CHECK_LAST_ERROR_CONTAINS("main-thread-message");
    return 0;
}
