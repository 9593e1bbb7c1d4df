/*
 * Tests of merge (cli/merge.h): the recordings of a tree of processes read
 * as one.  Each process gets a root frame of its own above its stacks; its
 * strings, frames, stacks and threads are renumbered after the ones before
 * it; samples are placed on one clock (start_realtime_ns); counters are
 * summed, the max_ ones take the largest; the status is the worst, and the
 * merged INFO says which process ended how.  Two recordings of the same
 * event at different periods are refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/merge.h"
#include "common/mem.h"
#include "fixture.h"
#include "format/writer.h"
#include "test.h"

/* One process's recording: a thread "main" (tid = pid) with `samples`
 * samples of Main -> Leaf at 1 ms intervals from its start, counters
 * samples (= samples) and max_agent_heap_bytes (= heap); closed or cut
 * short (no trailer, as when the process was killed). */
struct process {
    const char *pid, *command, *start, *ended_by, *leaf;
    uint64_t period, samples, heap;
    int closed;
};

static int write_process(struct buf *out, const struct process *p)
{
    struct writer w;
    struct writer_sink sink = {fixture_sink, out};
    if (writer_begin(&w, sink) < 0)
        return -1;
    writer_info(&w, FMT_INFO_PID, p->pid);
    writer_info(&w, FMT_INFO_COMMAND, p->command);
    writer_info(&w, FMT_INFO_START_REALTIME_NS, p->start);
    if (p->ended_by)
        writer_info(&w, FMT_INFO_ENDED_BY, p->ended_by);
    writer_event(&w, FMT_EVENT_CPU, "cpu", "ns", p->period);
    uint32_t mod = writer_string(&w, "App.dll", 7), type = writer_string(&w, "App.Program", 11);
    uint32_t main_ = writer_string(&w, "Main", 4);
    uint32_t leaf = writer_string(&w, p->leaf, strlen(p->leaf));
    uint32_t tname = writer_string(&w, "main", 4);
    uint32_t f_main = writer_frame(&w, FMT_FRAME_MANAGED, mod, type, main_, 0);
    uint32_t f_leaf = writer_frame(&w, FMT_FRAME_MANAGED, mod, type, leaf, 0);
    uint32_t frames[] = {f_leaf, f_main};
    uint32_t stack = writer_stack(&w, frames, 2);
    writer_thread(&w, 1, (uint64_t)strtoull(p->pid, NULL, 10), tname);
    for (uint64_t i = 1; i <= p->samples; i++)
        writer_sample(&w, FMT_EVENT_CPU, 1, i * 1000000, stack, 1);
    const char *keys[] = {"samples", "max_agent_heap_bytes"};
    uint64_t values[] = {p->samples, p->heap};
    int rc;
    if (p->closed) {
        rc = writer_finish(&w, keys, values, 2);
    } else {
        writer_stat(&w, keys[0], values[0]);
        writer_stat(&w, keys[1], values[1]);
        rc = writer_flush(&w);
    }
    writer_free(&w);
    return rc < 0 || w.error ? -1 : 0;
}

static int load_process(const struct process *p, struct recording *r)
{
    struct buf b;
    buf_init(&b);
    char err[256];
    int rc = write_process(&b, p) == 0 ? rec_load_memory(b.data, b.len, r, err, sizeof err) : -1;
    buf_free(&b);
    return rc;
}

/* The frame names of a stack, root first, joined by ';'. */
static void stack_text(const struct recording *r, uint32_t stack, char *out, size_t size)
{
    const struct rec_stack *s = &r->stacks[stack];
    size_t used = 0;
    out[0] = '\0';
    for (uint32_t k = s->depth; k > 0 && used < size; k--) {
        const struct rec_frame *f = &r->frames[r->stack_frames[s->offset + k - 1]];
        struct rec_str name = r->strings[f->name];
        int n = snprintf(out + used, size - used, "%s%.*s", used ? ";" : "", (int)name.len, name.p);
        if (n > 0)
            used += (size_t)n;
    }
}

static const struct process app = {"100", "dotnet App.dll", "1000000000", NULL, "Work", 1000000,
                                   3, 5000, 1};
static const struct process child = {"200", "dotnet Child.dll", "1002000000", "SIGKILL",
                                     "Child", 1000000, 2, 9000, 0};

static void test_merge_two_processes(void)
{
    struct recording in[2], m;
    REQUIRE(load_process(&child, &in[0]) == 0); /* given out of order: sorted by start */
    REQUIRE(load_process(&app, &in[1]) == 0);
    CHECK_EQ(in[1].status, REC_COMPLETE);
    CHECK_EQ(in[0].status, REC_TRUNCATED);
    char err[256] = "";
    REQUIRE(merge_recordings(in, 2, &m, err, sizeof err) == 0);
    CHECK_EQ(m.sample_count, 5);
    CHECK_EQ(m.thread_count, 2);
    /* threads renumbered: the second process's come after the first's */
    CHECK(m.threads[0].id != m.threads[1].id);
    /* every stack under its process's root frame; the app started first */
    char text[256];
    int app_seen = 0, child_seen = 0;
    for (size_t i = 0; i < m.sample_count; i++) {
        const struct rec_sample *s = &m.samples[i];
        stack_text(&m, s->stack, text, sizeof text);
        if (!strcmp(text, "process 100;Main;Work")) {
            app_seen++;
            CHECK(s->time >= 1000000 && s->time <= 3000000);
        } else if (!strcmp(text, "process 200;Main;Child")) {
            child_seen++;
            /* on the app's clock: the child started 2 ms later */
            CHECK(s->time >= 3000000 && s->time <= 4000000);
        } else {
            CHECK_STR(text, "(a stack of one of the two processes)");
        }
    }
    CHECK_EQ(app_seen, 3);
    CHECK_EQ(child_seen, 2);
    /* the root frame names the process's command */
    const struct rec_frame *root = &m.frames[m.stack_frames[m.stacks[m.samples[0].stack].offset +
                                                            m.stacks[m.samples[0].stack].depth - 1]];
    CHECK_EQ(root->kind, FMT_FRAME_LABEL);
    CHECK(rec_str_eq(m.strings[root->type], "dotnet App.dll"));
    /* counters summed, the max_ ones the largest; the worst status */
    CHECK_EQ(rec_stat(&m, "samples"), 5);
    CHECK_EQ(rec_stat(&m, "max_agent_heap_bytes"), 9000);
    CHECK_EQ(m.status, REC_TRUNCATED);
    CHECK(strstr(m.problem, "process 200: ") == m.problem);
    /* INFO: the first process's, and who ended how */
    CHECK_EQ(merge_pid_of(&m), 100);
    const struct rec_str *ended = rec_info(&m, FMT_INFO_ENDED_BY);
    REQUIRE(ended);
    CHECK(rec_str_eq(*ended, "process 200: SIGKILL"));
    rec_free(&m);
}

static void test_merge_one_is_moved(void)
{
    struct recording in[1], m;
    REQUIRE(load_process(&app, &in[0]) == 0);
    size_t samples = in[0].sample_count;
    char err[256];
    REQUIRE(merge_recordings(in, 1, &m, err, sizeof err) == 0);
    CHECK_EQ(m.sample_count, samples);
    CHECK(in[0].samples == NULL); /* moved, not copied */
    rec_free(&m);
}

static void test_merge_refuses_other_periods(void)
{
    struct process slow = app;
    slow.pid = "300";
    slow.period = 10000000;
    struct recording in[2], m;
    REQUIRE(load_process(&app, &in[0]) == 0);
    REQUIRE(load_process(&slow, &in[1]) == 0);
    char err[256] = "";
    CHECK(merge_recordings(in, 2, &m, err, sizeof err) < 0);
    CHECK(strstr(err, "event cpu was recorded differently") != NULL);
}

static void test_merge_pid_of(void)
{
    struct process bad = app;
    struct recording r;
    const char *pids[] = {"100", "0", "-5", "12x", ""};
    long want[] = {100, -1, -1, -1, -1};
    for (size_t i = 0; i < sizeof pids / sizeof pids[0]; i++) {
        bad.pid = pids[i];
        REQUIRE(load_process(&bad, &r) == 0);
        CHECK_EQ(merge_pid_of(&r), want[i]);
        rec_free(&r);
    }
}

/* Every allocation of a merge can fail: a clean error, the inputs freed
 * (ASan's leak check says so), never a crash. */
static void test_merge_allocation_failures(void)
{
    for (long n = 1;; n++) {
        struct recording in[2], m;
        REQUIRE(load_process(&app, &in[0]) == 0);
        REQUIRE(load_process(&child, &in[1]) == 0);
        char err[256] = "";
        mem_fail_after(n, 0);
        int rc = merge_recordings(in, 2, &m, err, sizeof err);
        mem_fail_after(0, 0);
        if (rc == 0) {
            CHECK_EQ(m.sample_count, 5);
            rec_free(&m);
            CHECK(n > 1);
            break;
        }
        CHECK(strstr(err, "out of memory") != NULL);
        REQUIRE(n < 10000);
    }
}

void suite_merge(void)
{
    RUN(test_merge_two_processes);
    RUN(test_merge_one_is_moved);
    RUN(test_merge_refuses_other_periods);
    RUN(test_merge_pid_of);
    RUN(test_merge_allocation_failures);
}
