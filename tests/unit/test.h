/*
 * test: the unit-test harness.  A test is a void function; CHECK records a
 * failure and carries on, REQUIRE records it and returns from the test.
 * Each test file exposes one suite_<name>() that RUNs its tests; main.c
 * lists the suites.  The exit status is the number of failed checks (capped).
 */
#ifndef CORSCOPE_TEST_H
#define CORSCOPE_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern int test_failed_checks;
void test_fail(const char *file, int line, const char *what);
void test_run(const char *name, void (*fn)(void));

#define CHECK(c) ((c) ? (void)0 : test_fail(__FILE__, __LINE__, #c))
#define REQUIRE(c)                                   \
    do {                                             \
        if (!(c)) {                                  \
            test_fail(__FILE__, __LINE__, #c);       \
            return;                                  \
        }                                            \
    } while (0)
#define CHECK_EQ(a, b)                                                                         \
    do {                                                                                       \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b);         \
        if (a_ != b_) {                                                                        \
            char m_[256];                                                                      \
            snprintf(m_, sizeof m_, "%s == %s (%llu != %llu)", #a, #b, a_, b_);                \
            test_fail(__FILE__, __LINE__, m_);                                                 \
        }                                                                                      \
    } while (0)
#define CHECK_STR(a, b)                                                                        \
    do {                                                                                       \
        const char *a_ = (a), *b_ = (b);                                                       \
        if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                               \
            char m_[2048];                                                                     \
            snprintf(m_, sizeof m_, "%s == %s (\"%s\" != \"%s\")", #a, #b, a_ ? a_ : "(null)", \
                     b_ ? b_ : "(null)");                                                      \
            test_fail(__FILE__, __LINE__, m_);                                                 \
        }                                                                                      \
    } while (0)
#define RUN(fn) test_run(#fn, fn)

#endif
