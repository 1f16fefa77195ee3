/* An integrator that dlopens dnnplan (the way Transformer-Engine-style libraries load their
 * backends): no link-time dependency on libdnnplan, every entry point resolved with dlsym and typed
 * from the header's own declarations, the versions checked before the first real call, then
 * planning on several threads, and the library closed and opened again, once with every thread
 * that used it gone and once while one of them is still alive.
 *
 * Built by tests/c_abi.rs WITHOUT -ldnnplan (files named t_dlopen_*.c); the harness passes the
 * library's path (its SONAME file) in DNNP_TEST_LIBRARY.
 *
 * What it pins:
 *  - the library is not in the process before dlopen (the build really has no DT_NEEDED on it);
 *  - every symbol the integrator needs resolves; DNNP_VERSION / DNNP_ABI_VERSION match the
 *    library's dnnp_get_version() / dnnp_get_abi_version() (a header from another release is
 *    refused before any other call);
 *  - a real job through the resolved pointers: a GDN forward graph from examples/graphs planned for
 *    sm_90 lists gdn_sm90 first; an attention eligibility request answers; a bad call sets this
 *    thread's last error and leaves other threads' messages alone (four threads at once);
 *  - dlclose leaves the library mapped (it is linked with -z nodelete), also after a close with
 *    every thread that used it gone: a Rust library frees none of its statics when unloaded, so an
 *    unload would leak the caches (valgrind counted 53 KB definitely lost per load) and drop the
 *    CUDA modules' owner; dlclose while a thread that set its last-error message is parked, then
 *    that thread exits after the close, then dlopen again and the same job: no crash.
 *    Valgrind and ASan runs (.ci/run) check the memory. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnnplan.h"

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                            \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        exit(1);                                                                                   \
    } while (0)

/* The entry points this integrator uses, typed from the header's declarations. */
struct api {
    void *lib;
    __typeof__(&dnnp_get_version) get_version;
    __typeof__(&dnnp_get_abi_version) get_abi_version;
    __typeof__(&dnnp_status_name) status_name;
    __typeof__(&dnnp_get_last_error_string) get_last_error_string;
    __typeof__(&dnnp_graph_from_json) graph_from_json;
    __typeof__(&dnnp_graph_set_target) graph_set_target;
    __typeof__(&dnnp_graph_destroy) graph_destroy;
    __typeof__(&dnnp_graph_create_plan_list) graph_create_plan_list;
    __typeof__(&dnnp_plan_list_create_execution_plans) plan_list_create_execution_plans;
    __typeof__(&dnnp_plan_list_get_count) plan_list_get_count;
    __typeof__(&dnnp_plan_list_get_plan_name) plan_list_get_plan_name;
    __typeof__(&dnnp_plan_list_destroy) plan_list_destroy;
    __typeof__(&dnnp_attention_eligibility) attention_eligibility;
};

static void *resolve(void *lib, const char *name) {
    void *sym;
    dlerror();
    sym = dlsym(lib, name);
    if (sym == NULL) {
        const char *why = dlerror();
        FAIL("dlsym(%s): %s", name, why != NULL ? why : "NULL");
    }
    return sym;
}

/* Loads the library and resolves the table; POSIX's idiom stores dlsym's object pointer into the
 * function pointer's bytes. */
#define RESOLVE(a, field) (*(void **)(&(a)->field) = resolve((a)->lib, "dnnp_" #field))

static struct api open_api(const char *path) {
    struct api a;
    memset(&a, 0, sizeof a);
    a.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (a.lib == NULL) {
        FAIL("dlopen(%s): %s", path, dlerror());
    }
    RESOLVE(&a, get_version);
    RESOLVE(&a, get_abi_version);
    RESOLVE(&a, status_name);
    RESOLVE(&a, get_last_error_string);
    RESOLVE(&a, graph_from_json);
    RESOLVE(&a, graph_set_target);
    RESOLVE(&a, graph_destroy);
    RESOLVE(&a, graph_create_plan_list);
    RESOLVE(&a, plan_list_create_execution_plans);
    RESOLVE(&a, plan_list_get_count);
    RESOLVE(&a, plan_list_get_plan_name);
    RESOLVE(&a, plan_list_destroy);
    RESOLVE(&a, attention_eligibility);
    /* The header this integrator was compiled against must be the library's. */
    if (a.get_version() != DNNP_VERSION) {
        FAIL("library version %zu, header DNNP_VERSION %d", a.get_version(), DNNP_VERSION);
    }
    if (strcmp(a.get_abi_version(), DNNP_ABI_VERSION) != 0) {
        FAIL("library ABI %s, header DNNP_ABI_VERSION %s", a.get_abi_version(), DNNP_ABI_VERSION);
    }
    return a;
}

static void close_api(struct api *a) {
    if (dlclose(a->lib) != 0) {
        FAIL("dlclose: %s", dlerror());
    }
    memset(a, 0, sizeof *a);
}

#define OK(a, expr)                                                                                \
    do {                                                                                           \
        dnnp_status_t s_ = (expr);                                                                 \
        if (s_ != DNNP_STATUS_SUCCESS) {                                                           \
            char msg_[512] = "";                                                                   \
            (a)->get_last_error_string(msg_, sizeof msg_, NULL);                                   \
            FAIL("%s returned %s: %s", #expr, (a)->status_name(s_), msg_);                         \
        }                                                                                          \
    } while (0)

/* Its own helpers (common.h's call into the library, which this program does not link). */
static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    char *text;
    long n;
    if (f == NULL) FAIL("cannot open %s", path);
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        FAIL("cannot size %s", path);
    }
    text = (char *)malloc((size_t)n + 1);
    if (text == NULL || fread(text, 1, (size_t)n, f) != (size_t)n) FAIL("cannot read %s", path);
    text[n] = '\0';
    fclose(f);
    return text;
}

static char *g_gdn_json;

/* The job: plan the GDN forward example for a 132-SM sm_90 and check what the list ranks first;
 * ask the selector about an SDPA request. */
static void plan_gdn(const struct api *a) {
    dnnp_graph_t *g = NULL;
    dnnp_plan_list_t *list = NULL;
    size_t count = 0;
    char name[256];
    OK(a, a->graph_from_json(g_gdn_json, &g));
    OK(a, a->graph_set_target(g, NULL, 132, 90));
    OK(a, a->graph_create_plan_list(g, &list));
    a->graph_destroy(g);
    OK(a, a->plan_list_create_execution_plans(list, NULL, 0));
    OK(a, a->plan_list_get_count(list, &count));
    if (count == 0) FAIL("the GDN forward planned no plan on sm_90");
    OK(a, a->plan_list_get_plan_name(list, 0, name, sizeof name, NULL));
    if (strncmp(name, "gdn_sm90", 8) != 0) FAIL("plan 0 is %s, not gdn_sm90", name);
    a->plan_list_destroy(list);
}

static void ask_selector(const struct api *a) {
    static const char *const REQUEST =
        "{\"dtype\":\"bf16\",\"layout\":\"bshd_bshd_bshd\",\"mask\":\"causal\",\"b\":2,"
        "\"h_q\":32,\"h_kv\":8,\"s_q\":4096,\"d_qk\":128}";
    static const char *const ENV = "{\"sm\":90,\"cudnn\":\"9.19.0\"}";
    size_t needed = 0;
    char *buf;
    dnnp_status_t s = a->attention_eligibility(REQUEST, ENV, NULL, 0, &needed);
    if (s != DNNP_STATUS_BUFFER_TOO_SMALL || needed < 2) {
        FAIL("dnnp_attention_eligibility (size query) returned %s, needs %zu", a->status_name(s), needed);
    }
    buf = (char *)malloc(needed);
    if (buf == NULL) FAIL("out of memory");
    OK(a, a->attention_eligibility(REQUEST, ENV, buf, needed, NULL));
    if (strstr(buf, "\"selected\":\"cudnn.f16_arbitrary_seqlen\"") == NULL) {
        FAIL("the eligibility report selects another backend: %s", buf);
    }
    free(buf);
}

/* A bad call whose error names `tag` (a graph document whose only node has the op `tag`); then
 * this thread's last error must name it, whatever the other threads are doing. */
static void fail_with_tag(const struct api *a, const char *tag) {
    char json[512], msg[1024] = "";
    dnnp_graph_t *g = NULL;
    dnnp_status_t s;
    snprintf(json, sizeof json,
             "{\"format\": \"dnnplan.graph\", \"schema_version\": 1, \"context\": {\"io_data_type\":"
             " \"HALF\", \"intermediate_data_type\": \"FLOAT\", \"compute_data_type\": \"FLOAT\"},"
             " \"tensors\": [], \"nodes\": [{\"name\": \"n\", \"op\": \"%s\", \"compute_data_type\": null,"
             " \"inputs\": {}, \"outputs\": {}, \"attrs\": {}}]}",
             tag);
    s = a->graph_from_json(json, &g);
    if (s != DNNP_STATUS_BAD_PARAM || g != NULL) {
        FAIL("a graph with the unknown op %s: %s", tag, a->status_name(s));
    }
    a->get_last_error_string(msg, sizeof msg, NULL);
    if (strstr(msg, tag) == NULL) FAIL("this thread's last error does not name %s: %s", tag, msg);
}

struct worker {
    const struct api *api;
    int index;
    pthread_mutex_t *mu;
    pthread_cond_t *cv;
    int *release; /* when non-NULL: park until *release, then exit (after the library is closed) */
    int *ready;
};

static void *work(void *arg) {
    struct worker *w = (struct worker *)arg;
    char tag[32];
    int round;
    snprintf(tag, sizeof tag, "no_such_op_thread_%d", w->index);
    for (round = 0; round < 3; ++round) {
        plan_gdn(w->api);
        ask_selector(w->api);
        fail_with_tag(w->api, tag);
    }
    if (w->release != NULL) {
        /* this thread's last-error slot is set: hold it across the main thread's dlclose */
        pthread_mutex_lock(w->mu);
        *w->ready = 1;
        pthread_cond_broadcast(w->cv);
        while (!*w->release) pthread_cond_wait(w->cv, w->mu);
        pthread_mutex_unlock(w->mu);
    }
    return NULL;
}

static void start(pthread_t *t, struct worker *w) {
    if (pthread_create(t, NULL, work, w) != 0) FAIL("pthread_create");
}

static void join(pthread_t t) {
    if (pthread_join(t, NULL) != 0) FAIL("pthread_join");
}

/* Four threads at once, each the job three times; all joined. */
static void four_threads(const struct api *a, int first_index) {
    pthread_t threads[4];
    struct worker ws[4];
    int i;
    for (i = 0; i < 4; ++i) {
        ws[i] = (struct worker){a, first_index + i, NULL, NULL, NULL, NULL};
        start(&threads[i], &ws[i]);
    }
    for (i = 0; i < 4; ++i) join(threads[i]);
}

/* dlclose never unmaps dnnplan (it is linked with -z nodelete): its process-wide state (caches,
 * the CUDA modules it loaded, its handles on libcuda / libcudnn) must stay valid and must not leak,
 * since a Rust library frees none of its statics when unloaded. */
static void check_still_mapped(const char *path, const char *when) {
    void *still = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (still == NULL) FAIL("%s: dlclose unloaded the library (built without -z nodelete?)", when);
    dlclose(still);
}

int main(void) {
    const char *path = getenv("DNNP_TEST_LIBRARY");
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    int release = 0, ready = 0;
    struct api a;
    pthread_t parked;
    struct worker parked_w;

    if (path == NULL || path[0] == '\0') FAIL("DNNP_TEST_LIBRARY is not set (run through cargo test)");
    if (dlopen(path, RTLD_NOW | RTLD_NOLOAD) != NULL) {
        FAIL("%s is already loaded: this program must not link it", path);
    }
    g_gdn_json = read_file("examples/graphs/gdn_forward.json");

    /* Load 1: the job on worker threads only, all gone before the close. */
    a = open_api(path);
    four_threads(&a, 0);
    close_api(&a);
    check_still_mapped(path, "load 1 closed, its threads gone");

    /* Load 2: the job on this thread and four others, while a fifth that used the library stays
     * parked across the close; then it exits (its thread-local destructors run after dlclose). */
    a = open_api(path);
    plan_gdn(&a);
    ask_selector(&a);
    fail_with_tag(&a, "no_such_op_main");
    parked_w = (struct worker){&a, 99, &mu, &cv, &release, &ready};
    start(&parked, &parked_w);
    four_threads(&a, 10);
    fail_with_tag(&a, "no_such_op_main_again");
    pthread_mutex_lock(&mu);
    while (!ready) pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    close_api(&a);
    pthread_mutex_lock(&mu);
    release = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    join(parked);
    check_still_mapped(path, "load 2 closed, a thread exited after the close");

    /* Load 3: the same job, on the instance the earlier loads left (dlclose did not unmap it). */
    a = open_api(path);
    plan_gdn(&a);
    fail_with_tag(&a, "no_such_op_main_third");
    four_threads(&a, 20);
    close_api(&a);

    free(g_gdn_json);
    printf("dlopen integrator: three loads, thirteen threads, ok\n");
    return 0;
}
