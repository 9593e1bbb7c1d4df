/*
 * Tests of report (cli/report.h): report_render writes a report to its
 * file whole or not at all, through a temporary file renamed into place;
 * every allocation on the way may fail (the temporary name goes through
 * mem_*, so the fault injection reaches it), leaving neither a report
 * nor a temporary file behind.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mem.h"
#include "fixture.h"
#include "test.h"

/* Files in dir (the directory entries . and .. left out). */
static int files_in(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void test_render_whole_or_nothing(void)
{
    char dir[] = "/tmp/corscope-unit-render.XXXXXX";
    REQUIRE(mkdtemp(dir));
    char rec_path[128], out_path[128];
    snprintf(rec_path, sizeof rec_path, "%s/app.corscope", dir);
    snprintf(out_path, sizeof out_path, "%s/app.txt", dir);
    struct buf b;
    buf_init(&b);
    REQUIRE(fixture_recording(&b, 1) == 0);
    int fd = open(rec_path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    REQUIRE(fd >= 0);
    CHECK(write(fd, b.data, b.len) == (ssize_t)b.len);
    close(fd);
    buf_free(&b);
    const struct report_format *top = report_find("top");
    REQUIRE(top);
    const char *recs[1] = {rec_path};
    int saved = fixture_stderr_off(); /* the failures' messages */
    long n;
    for (n = 1;; n++) {
        mem_fail_after(n, 0);
        int rc = report_render(recs, 1, top, out_path);
        mem_fail_after(0, 0);
        if (rc == 0)
            break;
        /* failed: no report, no temporary file, only the recording */
        CHECK(access(out_path, F_OK) != 0);
        CHECK_EQ(files_in(dir), 1);
        if (n >= 10000)
            break;
    }
    fixture_stderr_on(saved);
    CHECK(n > 1 && n < 10000);
    CHECK(access(out_path, F_OK) == 0);
    CHECK_EQ(files_in(dir), 2);
    unlink(out_path);
    unlink(rec_path);
    rmdir(dir);
}

void suite_report(void)
{
    RUN(test_render_whole_or_nothing);
}
