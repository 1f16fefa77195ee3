/* One plan list, 8 threads executing it concurrently through the C ABI with their own buffers:
 * every call sees exactly its own pointers (the recording engine copies the calling thread's tag
 * from operand 0 into the others), in both the raw and the DLPack form. */
#include <pthread.h>
#include <stdint.h>

#include "common.h"

#define THREADS 8
#define CALLS 2000
#define N 4

static dnnp_plan_list_t *list;
static dnnp_handle_t *handle;

static void *worker(void *arg) {
    uint64_t id = (uint64_t)(uintptr_t)arg;
    uint64_t bufs[N][2];
    void *ptrs[N];
    int64_t shape[3] = {1, 128, 64};
    dnnp_dltensor t[N];
    const dnnp_dltensor *tp[N];
    int call, i;
    memset(t, 0, sizeof t);
    for (i = 0; i < N; i++) {
        ptrs[i] = bufs[i];
        t[i].data = bufs[i];
        t[i].device.device_type = 2;
        t[i].ndim = 3;
        t[i].dtype.code = 4;
        t[i].dtype.bits = 16;
        t[i].dtype.lanes = 1;
        t[i].shape = shape;
        tp[i] = &t[i];
    }
    for (call = 0; call < CALLS; call++) {
        uint64_t tag = (id << 32) | (uint64_t)call;
        memset(bufs, 0, sizeof bufs);
        bufs[0][0] = tag;
        if (call % 2 == 0) {
            CHECK_OK(dnnp_plan_list_execute(list, handle, ptrs, N, NULL, 0, NULL, 0));
        } else {
            CHECK_OK(dnnp_plan_list_execute_dlpack(list, handle, tp, N, NULL, 0, NULL, 0));
        }
        for (i = 1; i < N; i++) {
            if (bufs[i][0] != tag + (uint64_t)i) {
                DNNP_TEST_FAILF("thread %llu call %d operand %d: got %llu, want %llu",
                                (unsigned long long)id, call, i, (unsigned long long)bufs[i][0],
                                (unsigned long long)(tag + (uint64_t)i));
            }
        }
    }
    return NULL;
}

int main(void) {
    pthread_t th[THREADS];
    int i;
    CHECK_OK(dnnp_debug_plan_list_create_exec_test(DNNP_EXEC_TEST_ENGINE_RECORDING, N, &list));
    CHECK_OK(dnnp_handle_create(NULL, &handle));
    for (i = 0; i < THREADS; i++) {
        CHECK(pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1)) == 0);
    }
    for (i = 0; i < THREADS; i++) {
        CHECK(pthread_join(th[i], NULL) == 0);
    }
    dnnp_plan_list_destroy(list);
    dnnp_handle_destroy(handle);
    return 0;
}
