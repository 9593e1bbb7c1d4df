/*
 * Tests of fold.h: runs of native frames without a symbol, the main
 * thread's start-up, other threads' starts, the runtime's own threads, and
 * what is left alone, a failed start-up walk with labels (issue 20.8).
 * Stacks are written with the real writer and read back, as a report would.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/fold.h"
#include "cli/frame_name.h"
#include "fixture.h"
#include "format/writer.h"
#include "test.h"

struct fw {
    struct writer w;
    uint32_t coreclr, clrjit, hostpolicy, dotnet, libc, libfoo, app;
};

static uint32_t str(struct fw *f, const char *s)
{
    return writer_string(&f->w, s, strlen(s));
}

static uint32_t unnamed(struct fw *f, uint32_t module, uint64_t offset)
{
    return writer_frame(&f->w, FMT_FRAME_RUNTIME, module, 0, 0, offset);
}

static uint32_t named(struct fw *f, enum fmt_frame_kind kind, uint32_t module, const char *name)
{
    return writer_frame(&f->w, kind, module, 0, str(f, name), 0);
}

static uint32_t managed(struct fw *f, const char *method)
{
    return writer_frame(&f->w, FMT_FRAME_MANAGED, f->app, str(f, "N.P"), str(f, method), 0);
}

/* A stack given root first (as people read it), written leaf first. */
static uint32_t stack(struct fw *f, const uint32_t *root_first, uint32_t n)
{
    uint32_t leaf_first[32];
    for (uint32_t i = 0; i < n; i++)
        leaf_first[i] = root_first[n - 1 - i];
    return writer_stack(&f->w, leaf_first, n);
}

/* The sample's stack as "root;...;leaf". */
static void render(const struct recording *r, size_t sample, char *out, size_t size)
{
    struct rec_stack s = r->stacks[r->samples[sample].stack];
    size_t used = 0;
    out[0] = 0;
    for (uint32_t k = s.depth; k > 0 && used < size; k--) {
        char name[256];
        frame_name_format(r, r->stack_frames[s.offset + k - 1], name, sizeof name);
        used += (size_t)snprintf(out + used, size - used, "%s%s", k == s.depth ? "" : ";", name);
    }
}

static void test_fold_stacks(void)
{
    struct buf b;
    buf_init(&b);
    struct fw f;
    struct writer_sink sink = {fixture_sink, &b};
    REQUIRE(writer_begin(&f.w, sink) == 0);
    writer_event(&f.w, FMT_EVENT_CPU, "cpu", "ns", 1000000);
    f.coreclr = str(&f, "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.0/libcoreclr.so");
    f.clrjit = str(&f, "/x/libclrjit.so");
    f.hostpolicy = str(&f, "/x/libhostpolicy.so");
    f.dotnet = str(&f, "/usr/share/dotnet/dotnet");
    f.libc = str(&f, "/lib/x86_64-linux-gnu/libc.so.6");
    f.libfoo = str(&f, "/opt/libfoo.so");
    f.app = str(&f, "/app/App.dll");
    uint32_t start = unnamed(&f, f.dotnet, 0x6bd9);
    uint32_t libc_start = named(&f, FMT_FRAME_NATIVE, f.libc, "__libc_start_main");
    uint32_t host = unnamed(&f, f.hostpolicy, 0x2f01b);
    uint32_t exec = named(&f, FMT_FRAME_RUNTIME, f.coreclr, "coreclr_execute_assembly");
    uint32_t clone = named(&f, FMT_FRAME_NATIVE, f.libc, "__GI___clone3");
    uint32_t thread_start = named(&f, FMT_FRAME_NATIVE, f.libc, "start_thread");
    uint32_t memset_ = named(&f, FMT_FRAME_NATIVE, f.libc, "memset");
    uint32_t foo = named(&f, FMT_FRAME_NATIVE, f.libfoo, "worker");
    uint32_t c1 = unnamed(&f, f.coreclr, 0x100), c2 = unnamed(&f, f.coreclr, 0x200);
    uint32_t c3 = unnamed(&f, f.coreclr, 0x300), c4 = unnamed(&f, f.coreclr, 0x400);
    uint32_t j1 = unnamed(&f, f.clrjit, 0x10), j2 = unnamed(&f, f.clrjit, 0x20);
    uint32_t main_ = managed(&f, "Main"), work = managed(&f, "Work"), cb = managed(&f, "Cb");
    uint32_t jit = writer_frame(&f.w, FMT_FRAME_LABEL, 0, 0, str(&f, "JIT"), work);
    uint32_t t_main = str(&f, "dotnet"), t_bgc = str(&f, ".NET BGC"), t_w = str(&f, "worker");
    writer_thread(&f.w, 1, 100, t_main);
    writer_thread(&f.w, 2, 101, t_bgc);
    writer_thread(&f.w, 3, 102, t_w);
    uint32_t s[9];
    /* 0: the main thread, compiling */
    s[0] = stack(&f, (uint32_t[]){start, libc_start, host, exec, c1, c2, main_, work, c3, c4, jit,
                                  j1, j2, memset_},
                 14);
    /* 1: the same but for offsets inside the runs: the same folded stack */
    s[1] = stack(&f, (uint32_t[]){start, libc_start, host, exec, c2, c1, main_, work, c4, c3, jit,
                                  j2, j1, memset_},
                 14);
    /* 2: the runtime starting, no managed frame yet */
    s[2] = stack(&f, (uint32_t[]){start, libc_start, host, exec, c1, c2}, 6);
    /* 3: a managed thread the runtime started */
    s[3] = stack(&f, (uint32_t[]){clone, thread_start, c1, c2, main_, work}, 6);
    /* 4: a runtime thread without managed frames (on thread 2, .NET BGC) */
    s[4] = stack(&f, (uint32_t[]){clone, thread_start, c1, c2, c3}, 5);
    /* 5: a native library's thread calling managed code keeps its frames */
    s[5] = stack(&f, (uint32_t[]){clone, thread_start, foo, cb}, 4);
    /* 6: a named frame between two runs keeps them apart */
    s[6] = stack(&f, (uint32_t[]){clone, thread_start, c1, main_, c2, exec, c3, c4}, 8);
    /* 7: the same runtime-only stack on a thread the runtime did not name */
    s[7] = s[4];
    /* 8: the agent's labels at the root of a stack without managed frames */
    s[8] = stack(&f, (uint32_t[]){jit, clone, thread_start, c1, j1}, 5);
    uint32_t threads[9] = {1, 1, 1, 3, 2, 3, 3, 3, 2};
    for (int i = 0; i < 9; i++)
        writer_sample(&f.w, FMT_EVENT_CPU, threads[i], (uint64_t)i * 1000, s[i], 1);
    REQUIRE(writer_finish(&f.w, NULL, NULL, 0) == 0);
    writer_free(&f.w);

    struct recording r, raw;
    char err[256], text[256];
    REQUIRE(rec_load_memory(b.data, b.len, &r, err, sizeof err) == 0);
    REQUIRE(rec_load_memory(b.data, b.len, &raw, err, sizeof err) == 0);
    buf_free(&b);
    REQUIRE(fold_recording(&r) == 0);
    render(&r, 0, text, sizeof text);
    CHECK_STR(text, "[start];N.P.Main;N.P.Work;libcoreclr.so;[JIT] N.P.Work;libclrjit.so;"
                    "libc.so.6!memset");
    CHECK_EQ(r.samples[0].stack, r.samples[1].stack);
    render(&r, 2, text, sizeof text);
    CHECK_STR(text, "[start];libcoreclr.so!coreclr_execute_assembly;libcoreclr.so");
    render(&r, 3, text, sizeof text);
    CHECK_STR(text, "[thread];N.P.Main;N.P.Work");
    render(&r, 4, text, sizeof text);
    CHECK_STR(text, "[.NET BGC];libcoreclr.so");
    render(&r, 5, text, sizeof text);
    CHECK_STR(text, "libc.so.6!__GI___clone3;libc.so.6!start_thread;libfoo.so!worker;N.P.Cb");
    CHECK_EQ(r.samples[5].stack, raw.samples[5].stack); /* unchanged: not copied */
    render(&r, 6, text, sizeof text);
    CHECK_STR(text, "[thread];N.P.Main;libcoreclr.so;libcoreclr.so!coreclr_execute_assembly;"
                    "libcoreclr.so");
    render(&r, 7, text, sizeof text);
    CHECK_STR(text, "[thread];libcoreclr.so");
    render(&r, 8, text, sizeof text);
    CHECK_STR(text, "[.NET BGC];[JIT] N.P.Work;libcoreclr.so;libclrjit.so");
    /* unfolded, every frame as recorded */
    render(&raw, 4, text, sizeof text);
    CHECK_STR(text, "libc.so.6!__GI___clone3;libc.so.6!start_thread;libcoreclr.so!+0x100;"
                    "libcoreclr.so!+0x200;libcoreclr.so!+0x300");
    rec_free(&r);
    rec_free(&raw);
}

/* ---- issue 20.8: a start-up walk that failed at libc's start, with labels --- */

/* A main-thread sample in the runtime's start-up whose walk met libc's
 * unwind table before the agent had parsed it: the walk ends at
 * __libc_start_call_main and is marked failed ([unknown], after the labels
 * the agent put at the root).  Without labels the report folded it under
 * [start]; with one label it folded the label away; with two it left the
 * host's frames as they were, `dotnet` among them, which t_naming read as
 * a managed frame (issue 20.8).  The same walk now folds the same way
 * with or without labels, and keeps them. */
static void test_fold_failed_start_with_labels(void)
{
    struct buf b;
    buf_init(&b);
    struct writer w;
    struct writer_sink sink = {fixture_sink, &b};
    REQUIRE(writer_begin(&w, sink) == 0);
    writer_event(&w, FMT_EVENT_CPU, "cpu", "ns", 1000000);
#define STR(t) writer_string(&w, t, strlen(t))
    uint32_t libc = STR("/lib/x86_64-linux-gnu/libc.so.6"), dotnet = STR("/usr/share/dotnet/dotnet"),
             coreclr = STR("/x/libcoreclr.so");
    uint32_t call_main = writer_frame(&w, FMT_FRAME_NATIVE, libc, 0, STR("__libc_start_call_main"), 0);
    uint32_t host1 = writer_frame(&w, FMT_FRAME_NATIVE, dotnet, 0, 0, 0x7bee);
    uint32_t host2 = writer_frame(&w, FMT_FRAME_NATIVE, dotnet, 0, 0, 0x7910);
    uint32_t init = writer_frame(&w, FMT_FRAME_RUNTIME, coreclr, 0, STR("coreclr_initialize"), 0);
    uint32_t inner = writer_frame(&w, FMT_FRAME_RUNTIME, coreclr, 0, 0, 0x3688db);
    uint32_t load = writer_frame(&w, FMT_FRAME_LABEL, 0, 0, STR("load assembly"), 0);
    uint32_t module = writer_frame(&w, FMT_FRAME_LABEL, 0, 0, STR("load module"), 0);
    uint32_t failed = writer_frame(&w, FMT_FRAME_SYNTHETIC, 0, 0, STR("[unknown]"), 0);
#undef STR
    /* leaf first: the runtime, the host, libc's start; then the label, the mark */
    uint32_t with[] = {inner, init, host2, host1, call_main, load, failed};
    uint32_t without[] = {inner, init, host2, host1, call_main, failed};
    uint32_t two[] = {inner, init, host2, host1, call_main, module, load, failed};
    writer_thread(&w, 1, 100, writer_string(&w, "dotnet", 6));
    writer_sample(&w, FMT_EVENT_CPU, 1, 1000, writer_stack(&w, with, 7), 1);
    writer_sample(&w, FMT_EVENT_CPU, 1, 2000, writer_stack(&w, without, 6), 1);
    writer_sample(&w, FMT_EVENT_CPU, 1, 3000, writer_stack(&w, two, 8), 1);
    REQUIRE(writer_finish(&w, NULL, NULL, 0) == 0);
    writer_free(&w);
    struct recording r;
    char err[256];
    REQUIRE(rec_load_memory(b.data, b.len, &r, err, sizeof err) == 0);
    buf_free(&b);
    REQUIRE(fold_recording(&r) == 0);
    char text[3][256];
    for (int i = 0; i < 3; i++) {
        struct rec_stack st = r.stacks[r.samples[i].stack];
        size_t used = 0;
        text[i][0] = 0;
        for (uint32_t k = st.depth; k > 0; k--) {
            char name[256];
            frame_name_format(&r, r.stack_frames[st.offset + k - 1], name, sizeof name);
            used += (size_t)snprintf(text[i] + used, sizeof text[i] - used, "%s%s",
                                     k == st.depth ? "" : ";", name);
        }
    }
    CHECK_STR(text[1], "[start];libcoreclr.so!coreclr_initialize;libcoreclr.so");
    CHECK_STR(text[0], "[start];[load assembly];libcoreclr.so!coreclr_initialize;libcoreclr.so");
    CHECK_STR(text[2], "[start];[load assembly];[load module];libcoreclr.so!coreclr_initialize;"
                       "libcoreclr.so");
    rec_free(&r);
}

void suite_fold(void)
{
    RUN(test_fold_stacks);
    RUN(test_fold_failed_start_with_labels);
}
