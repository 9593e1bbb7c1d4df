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

/* One suite per module: tests/unit/test_<module>.c tests src/.../<module>.c
 * and defines suite_<module>() (test_format.c: src/format, with the damage
 * suite reader_damage; test_clr.c: src/clr and the COM objects built on it;
 * test_trace.c: src/agent/trace with the CLI's calls event, test_shadow.c
 * its shadow stacks and hooks; test_il.c: src/agent/il; test_assembly.c:
 * src/common/pdb with format/covplan over its assemblies).  Shared test
 * data is in fixture.c, and in data/ (the IL corpus, an assembly and its
 * PDBs). */
#ifndef SUITES /* a build of a few suites defines its own (build/aarch64/shadow-tests) */
#define SUITES(X)                                                                               \
    X(buf) X(crc32) X(units) X(utf) X(map) X(strtab) X(format) X(reader_damage) X(schema)      \
    X(clr) X(clrdesc) X(codemap) X(recorder) X(proctree) X(evq) X(config) X(names)             \
    X(thread_registry) X(thread_ids) X(resolve) X(merge) X(report) X(out_jit)                  \
    X(profile) X(frame_name) X(json) X(out_collapsed) X(out_top) X(out_tree) X(stack_bounds)   \
    X(cfi) X(nativeunwind) X(elfsym) X(fold) X(thread_rings) X(exflow) X(live) X(gc_table)     \
    X(out_pprof) X(ipc) X(control) X(control_client) X(status) X(trace) X(shadow) X(mcode)    \
    X(walk) X(mshape) X(mshape_arm64) X(lifecycle) X(container) X(il) X(inflate) X(assembly)   \
    X(covfile) X(pushcfg) X(pstream) X(pdefs) X(pushreq) X(http) X(spool) X(session)           \
    X(termsafe) X(dynsym) X(flame_timeline) X(ilwrap) X(achain) X(async_enter) X(sig)    \
    X(agent_thread) X(clock_cost) X(mdplace) X(stubcode) X(unhandled) X(pac) X(loop_wake)   \
    X(procmaps) X(vma_query) X(fds) X(chunk) X(cpu_share) X(agent_cost) X(callback_activity)    \
    X(summary)
#endif

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
