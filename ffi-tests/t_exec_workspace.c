/* Workspace rules at execute, checked before the plan runs: a plan that needs 256 bytes refuses a
 * missing workspace, a stated capacity below 256 and an address not 128-byte aligned, and accepts
 * an aligned one whose capacity is stated or DNNP_WORKSPACE_SIZE_UNKNOWN. */
#include <stdint.h>

#include "common.h"

#define N 2

static unsigned char ws_raw[512 + 128];

int main(void) {
    dnnp_plan_list_t *list = NULL;
    dnnp_handle_t *h = NULL;
    static uint64_t a[2], b[2];
    void *ptrs[N];
    unsigned char *ws = (unsigned char *)(((uintptr_t)ws_raw + 127) & ~(uintptr_t)127);
    ptrs[0] = a;
    ptrs[1] = b;

    CHECK_OK(dnnp_debug_plan_list_create_exec_test(DNNP_EXEC_TEST_ENGINE_WORKSPACE, N, &list));
    CHECK_OK(dnnp_handle_create(NULL, &h));

    CHECK_STATUS(dnnp_plan_list_execute(list, h, ptrs, N, NULL, DNNP_WORKSPACE_SIZE_UNKNOWN, NULL, 0),
                 DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("requires a 256-byte workspace but execute received none");
    CHECK_STATUS(dnnp_plan_list_execute(list, h, ptrs, N, ws, 128, NULL, 0), DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("requires 256 workspace bytes but 128 were given");
    CHECK_STATUS(dnnp_plan_list_execute(list, h, ptrs, N, ws + 64, 256, NULL, 0), DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("128-byte aligned");
    CHECK_STATUS(dnnp_plan_list_execute_plan_at_index(list, h, 0, ptrs, N, NULL, 0, NULL, 0),
                 DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("plan 0 requires");

    CHECK_OK(dnnp_plan_list_execute(list, h, ptrs, N, ws, 512, NULL, 0));
    CHECK_OK(dnnp_plan_list_execute(list, h, ptrs, N, ws, DNNP_WORKSPACE_SIZE_UNKNOWN, NULL, 0));
    CHECK_OK(dnnp_plan_list_execute_plan_at_index(list, h, 0, ptrs, N, ws, 256, NULL, 0));

    dnnp_plan_list_destroy(list);
    dnnp_handle_destroy(h);
    return 0;
}
