/*
 * spool: the cap (the oldest dropped; one in flight only if its send
 * fails, so what stays is the newest, in a row), the order, and
 * an earlier run's files taken over by the next, for the same server only.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/spool.h"
#include "test.h"

static void rm_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            rm_tree(sub);
        }
        closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static void test_spool(void)
{
    char root[] = "/tmp/corscope-spool-test.XXXXXX";
    REQUIRE(mkdtemp(root));
    struct spool s;
    REQUIRE(spool_open(&s, root, "http://h:1\n", 3000) == 0);
    CHECK(!s.note[0]);
    char body[1000];
    for (int i = 0; i < 4; i++) {
        memset(body, 'a' + i, sizeof body);
        REQUIRE(spool_add(&s, 1000 + (uint64_t)i, body, sizeof body) == 0);
    }
    /* the oldest went to stay under 3000 bytes */
    CHECK_EQ(s.dropped, 1);
    CHECK_EQ(spool_waiting(&s), 3);
    struct buf out;
    buf_init(&out);
    uint64_t id = spool_take(&s, &out);
    REQUIRE(id != 0);
    CHECK_EQ(out.len, 1000);
    CHECK_EQ(out.data[0], 'b');
    /* the oldest is in flight: it goes if its send fails, and the next
     * oldest stays (a gap among the newest was the bug: t_push's cap) */
    memset(body, 'e', sizeof body);
    REQUIRE(spool_add(&s, 1004, body, sizeof body) == 0);
    CHECK_EQ(s.dropped, 1);
    CHECK_EQ(spool_waiting(&s), 4);
    spool_release(&s, id);
    CHECK_EQ(s.dropped, 2);
    CHECK_EQ(spool_waiting(&s), 3);
    id = spool_take(&s, &out);
    CHECK_EQ(out.data[0], 'c');
    spool_done(&s, id);
    CHECK_EQ(spool_waiting(&s), 2);
    CHECK(spool_add(&s, 1005, body, 4000) < 0); /* larger than the cap */
    CHECK_EQ(s.dropped, 3);
    spool_close(&s); /* 'd' and 'e' wait on disk */

    /* the next run takes them over, and sends them first */
    REQUIRE(spool_open(&s, root, "http://h:1\n", 3000) == 0);
    CHECK_EQ(s.adopted, 2);
    memset(body, 'f', sizeof body);
    REQUIRE(spool_add(&s, 2000, body, 10) == 0);
    id = spool_take(&s, &out);
    CHECK_EQ(out.data[0], 'd');
    /* doomed while in flight, then sent: not dropped */
    memset(body, 'g', sizeof body);
    REQUIRE(spool_add(&s, 2001, body, sizeof body) == 0);
    spool_done(&s, id);
    CHECK_EQ(s.dropped, 0);
    CHECK_EQ(s.doomed_bytes, 0);
    id = spool_take(&s, &out);
    CHECK_EQ(out.data[0], 'e');
    spool_done(&s, id);
    id = spool_take(&s, &out);
    CHECK_EQ(out.data[0], 'f');
    spool_done(&s, id);
    id = spool_take(&s, &out);
    CHECK_EQ(out.data[0], 'g');
    spool_done(&s, id);
    CHECK_EQ(spool_take(&s, &out), 0);
    /* another server's spool is not ours */
    struct spool other;
    REQUIRE(spool_open(&other, root, "http://other:1\n", 3000) == 0);
    CHECK_EQ(other.adopted, 0);
    spool_close(&other);
    spool_close(&s);
    buf_free(&out);
    rm_tree(root);
}

void suite_spool(void)
{
    RUN(test_spool);
}
