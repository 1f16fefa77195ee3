/* DNNPLAN_LOG_INFO / DNNPLAN_LOG_FILE from a C program: a failing call is logged as a warning
 * naming its status, its message and the entry point's source location; the size query of the
 * two-call protocol (DNNP_STATUS_BUFFER_TOO_SMALL) is not a failure and is not logged; planning is
 * logged with its verdicts. The variables are set before the first dnnplan call (they are read
 * once, at the first event). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

int main(void) {
    char path[] = "/tmp/dnnplan_t_diag_logging_XXXXXX";
    int fd = mkstemp(path);
    dnnp_graph_t *g = NULL;
    dnnp_plan_list_t *list = NULL;
    size_t needed = 0;
    char *log;
    CHECK(fd >= 0);
    close(fd);
    CHECK(setenv("DNNPLAN_LOG_INFO", "1", 1) == 0);
    CHECK(setenv("DNNPLAN_LOG_FILE", path, 1) == 0);

    CHECK_STATUS(dnnp_graph_from_json("{not json", &g), DNNP_STATUS_BAD_PARAM);
    CHECK_STATUS(dnnp_op_catalogue_json(NULL, 0, &needed), DNNP_STATUS_BUFFER_TOO_SMALL);
    {
        char *text = dnnp_test_read_file("examples/graphs/gdn_forward.json");
        CHECK_OK(dnnp_graph_from_json(text, &g));
        free(text);
    }
    CHECK_OK(dnnp_graph_set_target(g, NULL, 132, 90));
    CHECK_OK(dnnp_graph_create_plan_list(g, &list));
    CHECK_OK(dnnp_plan_list_create_execution_plans(list, NULL, 0));
    dnnp_plan_list_destroy(list);
    dnnp_graph_destroy(g);

    log = dnnp_test_read_file(path);
    CHECK_STR_CONTAINS(log, "[dnnplan][I] t=");
    CHECK_STR_CONTAINS(log, "[dnnplan][W] t=");
    CHECK_STR_CONTAINS(log, "returned DNNP_STATUS_BAD_PARAM: JSON: key must be a string");
    CHECK_STR_CONTAINS(log, "call at src/ffi/");
    CHECK(strstr(log, "BUFFER_TOO_SMALL") == NULL);
    CHECK_STR_CONTAINS(log, "engines [gdn_sm90 accept]");
    free(log);
    CHECK(unlink(path) == 0);
    return 0;
}
