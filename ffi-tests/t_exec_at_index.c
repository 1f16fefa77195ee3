/* Execute at an index without changing the selection: the no-op test list has two entries
 * (0 selected and built); entry 1 must be prepared (built without selecting it) before it runs. */
#include <stdint.h>

#include "common.h"

#define N 3

int main(void) {
    dnnp_plan_list_t *list = NULL;
    dnnp_handle_t *h = NULL;
    size_t count = 0, selected = 99;
    void *ptrs[N] = {(void *)0x10000, (void *)0x20000, (void *)0x30000};

    CHECK_OK(dnnp_debug_plan_list_create_exec_test(DNNP_EXEC_TEST_ENGINE_NOOP, N, &list));
    CHECK_OK(dnnp_handle_create(NULL, &h));
    CHECK_OK(dnnp_plan_list_get_count(list, &count));
    CHECK_EQ_SIZE(count, 2);

    CHECK_OK(dnnp_plan_list_execute(list, h, ptrs, N, NULL, 0, NULL, 0));
    CHECK_OK(dnnp_plan_list_execute_plan_at_index(list, h, 0, ptrs, N, NULL, 0, NULL, 0));
    CHECK_STATUS(dnnp_plan_list_execute_plan_at_index(list, h, 1, ptrs, N, NULL, 0, NULL, 0),
                 DNNP_STATUS_INVALID_STATE);
    CHECK_LAST_ERROR_CONTAINS("plan 1 is not built");

    CHECK_OK(dnnp_plan_list_prepare_plan_at_index(list, 1));
    CHECK_OK(dnnp_plan_list_execute_plan_at_index(list, h, 1, ptrs, N, NULL, 0, NULL, 0));
    CHECK_OK(dnnp_plan_list_get_selected_index(list, &selected));
    CHECK_EQ_SIZE(selected, 0);

    CHECK_STATUS(dnnp_plan_list_prepare_plan_at_index(list, 2), DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("index 2 is out of range");
    CHECK_STATUS(dnnp_plan_list_prepare_plan_at_index(NULL, 0), DNNP_STATUS_NULL_PARAMETER);

    dnnp_plan_list_destroy(list);
    dnnp_handle_destroy(h);
    return 0;
}
