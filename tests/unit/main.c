/*
 * The unit-test runner: runs every suite, prints one line per failed check
 * and a summary, and exits non-zero when anything failed.  `unit-tests NAME`
 * runs only the tests whose name contains NAME.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

int test_failed_checks;
static int tests_run, tests_failed;
static const char *only;

void test_fail(const char *file, int line, const char *what)
{
    if (++test_failed_checks <= 50)
        fprintf(stderr, "  FAIL %s:%d: %s\n", file, line, what);
    else if (test_failed_checks == 51)
        fprintf(stderr, "  (further failures not shown)\n");
}

void test_run(const char *name, void (*fn)(void))
{
    if (only && !strstr(name, only))
        return;
    int before = test_failed_checks;
    fn();
    tests_run++;
    if (test_failed_checks != before) {
        tests_failed++;
        fprintf(stderr, "FAILED %s\n", name);
    }
}

#define SUITES(X) \
    X(buf) X(units) X(utf) X(tables) X(format) X(reader_damage) X(clr) X(agent) X(report) X(unwind) X(elfsym) X(fold) \
    X(slots) X(events) X(memory) X(attach) X(trace) X(frames) X(push)

#define DECLARE(s) void suite_##s(void);
SUITES(DECLARE)

int main(int argc, char **argv)
{
    if (argc > 1)
        only = argv[1];
#define CALL(s) suite_##s();
    SUITES(CALL)
    printf("unit tests: %d run, %d failed (%d failed checks)\n", tests_run, tests_failed,
           test_failed_checks);
    return tests_failed ? 1 : 0;
}
