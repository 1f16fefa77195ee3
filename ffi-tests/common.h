/*
 * Helpers for the C test programs in ffi-tests/ (one scenario per t_<area>_<what>.c file; the
 * program passes by returning 0 from main).
 *
 * Every CHECK macro stops the program on failure (exit status 1) after printing
 *   file:line: what failed, the values involved, and this thread's last-error message,
 * so a failing test names the exact call. Expressions are evaluated exactly once.
 *
 *   CHECK(cond)                      any condition
 *   CHECK_OK(expr)                   expr returns DNNP_STATUS_SUCCESS
 *   CHECK_STATUS(expr, expected)     expr returns the status `expected`
 *   CHECK_EQ_INT(a, b)               integers (compared as long long)
 *   CHECK_EQ_SIZE(a, b)              sizes (compared as unsigned long long)
 *   CHECK_STR_EQ(a, b)               NUL-terminated strings (NULL fails)
 *   CHECK_STR_CONTAINS(hay, needle)  `needle` occurs in `hay` (NULL fails)
 *   CHECK_LAST_ERROR_CONTAINS(s)     this thread's last-error message contains `s`
 *
 * Build: tests/c_abi.rs compiles each t_*.c with -std=c99 -Wall -Wextra -Werror -g -I include
 * -I ffi-tests (+ $FFI_TEST_CFLAGS) and links -ldnnplan -pthread; the program runs from the
 * repository root. A test that needs POSIX (pthreads) defines _POSIX_C_SOURCE 200809L before its
 * first #include. Tests must free what they allocate: CI runs them under valgrind (definite leaks
 * fail) and with -fsanitize=address,undefined.
 *
 * dnnp_test_last_error(buf, cap) copies this thread's last-error message into buf (truncated with
 * "..." when it does not fit) and returns buf; dnnp_test_read_file(path) returns a file's text
 * (malloc'd).
 */
#ifndef DNNPLAN_FFI_TESTS_COMMON_H
#define DNNPLAN_FFI_TESTS_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnnplan.h"

/* Copies this thread's last-error message into buf (always NUL-terminated); returns buf. */
static inline const char *dnnp_test_last_error(char *buf, size_t cap) {
    size_t needed = 0;
    dnnp_status_t s;
    if (cap == 0) {
        return "";
    }
    buf[0] = '\0';
    s = dnnp_get_last_error_string(buf, cap, &needed);
    if (s == DNNP_STATUS_BUFFER_TOO_SMALL && cap > 4) {
        /* Too long for the buffer: show what fits. */
        char *full = (char *)malloc(needed);
        if (full != NULL && dnnp_get_last_error_string(full, needed, NULL) == DNNP_STATUS_SUCCESS) {
            memcpy(buf, full, cap - 4);
            memcpy(buf + cap - 4, "...", 4);
        }
        free(full);
    } else if (s != DNNP_STATUS_SUCCESS) {
        snprintf(buf, cap, "<dnnp_get_last_error_string returned %s>", dnnp_status_name(s));
    }
    return buf;
}

/* Prints a failure with its location and the last-error message, then exits with status 1. */
static inline void dnnp_test_fail(const char *file, int line, const char *what) {
    char last[1024];
    dnnp_test_last_error(last, sizeof last);
    fprintf(stderr, "%s:%d: FAILED: %s\n", file, line, what);
    fprintf(stderr, "%s:%d:   last error: \"%s\"\n", file, line, last);
    fflush(stderr);
    exit(1);
}

#define DNNP_TEST_FAILF(...)                                                      \
    do {                                                                          \
        char dnnp_test_msg_[2048];                                                \
        snprintf(dnnp_test_msg_, sizeof dnnp_test_msg_, __VA_ARGS__);             \
        dnnp_test_fail(__FILE__, __LINE__, dnnp_test_msg_);                       \
    } while (0)

#define CHECK(cond)                                                               \
    do {                                                                          \
        if (!(cond)) {                                                            \
            dnnp_test_fail(__FILE__, __LINE__, "CHECK(" #cond ")");               \
        }                                                                         \
    } while (0)

#define CHECK_STATUS(expr, expected)                                              \
    do {                                                                          \
        dnnp_status_t dnnp_test_got_ = (expr);                                    \
        dnnp_status_t dnnp_test_want_ = (expected);                               \
        if (dnnp_test_got_ != dnnp_test_want_) {                                  \
            DNNP_TEST_FAILF("%s returned %s (%d), expected %s (%d)", #expr,        \
                            dnnp_status_name(dnnp_test_got_), (int)dnnp_test_got_, \
                            dnnp_status_name(dnnp_test_want_),                    \
                            (int)dnnp_test_want_);                                \
        }                                                                         \
    } while (0)

#define CHECK_OK(expr) CHECK_STATUS(expr, DNNP_STATUS_SUCCESS)

#define CHECK_EQ_INT(a, b)                                                        \
    do {                                                                          \
        long long dnnp_test_a_ = (long long)(a);                                  \
        long long dnnp_test_b_ = (long long)(b);                                  \
        if (dnnp_test_a_ != dnnp_test_b_) {                                       \
            DNNP_TEST_FAILF("%s == %s: %lld != %lld", #a, #b, dnnp_test_a_,        \
                            dnnp_test_b_);                                        \
        }                                                                         \
    } while (0)

#define CHECK_EQ_SIZE(a, b)                                                       \
    do {                                                                          \
        unsigned long long dnnp_test_a_ = (unsigned long long)(a);                \
        unsigned long long dnnp_test_b_ = (unsigned long long)(b);                \
        if (dnnp_test_a_ != dnnp_test_b_) {                                       \
            DNNP_TEST_FAILF("%s == %s: %llu != %llu", #a, #b, dnnp_test_a_,        \
                            dnnp_test_b_);                                        \
        }                                                                         \
    } while (0)

#define CHECK_STR_EQ(a, b)                                                        \
    do {                                                                          \
        const char *dnnp_test_a_ = (a);                                           \
        const char *dnnp_test_b_ = (b);                                           \
        if (dnnp_test_a_ == NULL || dnnp_test_b_ == NULL ||                       \
            strcmp(dnnp_test_a_, dnnp_test_b_) != 0) {                            \
            DNNP_TEST_FAILF("%s == %s: \"%s\" != \"%s\"", #a, #b,                  \
                            dnnp_test_a_ ? dnnp_test_a_ : "(null)",               \
                            dnnp_test_b_ ? dnnp_test_b_ : "(null)");              \
        }                                                                         \
    } while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                           \
    do {                                                                          \
        const char *dnnp_test_h_ = (hay);                                         \
        const char *dnnp_test_n_ = (needle);                                      \
        if (dnnp_test_h_ == NULL || dnnp_test_n_ == NULL ||                       \
            strstr(dnnp_test_h_, dnnp_test_n_) == NULL) {                         \
            DNNP_TEST_FAILF("%s contains %s: \"%s\" does not contain \"%s\"",      \
                            #hay, #needle, dnnp_test_h_ ? dnnp_test_h_ : "(null)", \
                            dnnp_test_n_ ? dnnp_test_n_ : "(null)");              \
        }                                                                         \
    } while (0)

#define CHECK_LAST_ERROR_CONTAINS(needle)                                         \
    do {                                                                          \
        char dnnp_test_last_[4096];                                               \
        CHECK_STR_CONTAINS(dnnp_test_last_error(dnnp_test_last_,                  \
                                                sizeof dnnp_test_last_),          \
                           (needle));                                             \
    } while (0)

/* The whole file at `path` (relative to the repository root, where the tests run) as a malloc'd,
 * NUL-terminated string (caller frees); an unreadable file fails the test. */
static inline char *dnnp_test_read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    long n;
    char *text;
    CHECK(f != NULL);
    CHECK(fseek(f, 0, SEEK_END) == 0);
    n = ftell(f);
    CHECK(n >= 0);
    CHECK(fseek(f, 0, SEEK_SET) == 0);
    text = (char *)malloc((size_t)n + 1);
    CHECK(text != NULL);
    CHECK(fread(text, 1, (size_t)n, f) == (size_t)n);
    text[n] = '\0';
    fclose(f);
    return text;
}

#endif /* DNNPLAN_FFI_TESTS_COMMON_H */
