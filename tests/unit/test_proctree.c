/*
 * Tests of proctree (agent/proctree.h): the files a tree of processes
 * writes, the first process's claim on the output and the others' beside it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>

#include "agent/proctree.h"
#include "test.h"

/* Item 2: the processes of one record never share a file: the first
 * claims the output record made (empty), the others go beside it under
 * their pid, exclusively, and a file that has data is nobody's to take. */
static void test_process_tree_files(void)
{
    char dir[] = "/tmp/corscope-unit-tree.XXXXXX";
    REQUIRE(mkdtemp(dir) != NULL);
    char path[96], chosen[128], beside[128];
    snprintf(path, sizeof path, "%s/app.corscope", dir);
    int made = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600); /* as record does */
    REQUIRE(made >= 0);
    close(made);
    int first = proctree_claim(path, 100, chosen, sizeof chosen);
    REQUIRE(first >= 0);
    CHECK_STR(chosen, path);
    int second = proctree_claim(path, 200, chosen, sizeof chosen); /* at the same time */
    REQUIRE(second >= 0);
    snprintf(beside, sizeof beside, "%s/app-200.corscope", dir);
    CHECK_STR(chosen, beside);
    CHECK(proctree_claim_first(path) < 0 && errno == EEXIST); /* locked */
    CHECK(write(first, "data", 4) == 4);
    close(first);
    CHECK(proctree_claim_first(path) < 0 && errno == EEXIST); /* has data: never truncated */
    int again = proctree_claim(path, 200, chosen, sizeof chosen); /* a pid seen before */
    REQUIRE(again >= 0);
    snprintf(beside, sizeof beside, "%s/app-200-2.corscope", dir);
    CHECK_STR(chosen, beside);
    close(second);
    close(again);
    CHECK(proctree_beside("/d/x.y/noext", 7, 1, chosen, sizeof chosen) == 0);
    CHECK_STR(chosen, "/d/x.y/noext-7");
    snprintf(beside, sizeof beside, "rm -rf '%s'", dir);
    CHECK(system(beside) == 0);
}

void suite_proctree(void)
{
    RUN(test_process_tree_files);
}
