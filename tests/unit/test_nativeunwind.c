/*
 * Tests of the native unwinder (agent/signal/nativeunwind.h) from inside a
 * signal handler: through qsort (Debian's glibc has no frame pointers) up to
 * the thread's first frame, and a sample taken off the thread's own stack;
 * tables read while they are published (issue 20.7, under TSan); which
 * objects it reads in place.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <glob.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/auxv.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "agent/signal/arch.h"
#include "agent/signal/handler.h"
#include "agent/signal/nativeunwind.h"
#include "agent/signal/stack_bounds.h"
#include "agent/signal/thread_rings.h"
#include "agent/signal/vma_query.h"
#include "agent/signal/walk.h"
#include "test.h"

/* ---- a real unwind from a signal handler ----------------------------------- */

#define MAX_CHAIN 128
static uintptr_t chain[MAX_CHAIN];
static int chain_len, chain_ended, fired;
static uintptr_t stack_lo, stack_hi;

static void on_signal(int sig, siginfo_t *si, void *ucv)
{
    (void)sig;
    (void)si;
    ucontext_t *uc = ucv;
    struct walk_regs r;
    arch_regs(uc, &r);
    uintptr_t pc = r.pc, sp = r.sp, fp = r.fp, lr = r.lr;
    chain_len = 0;
    chain_ended = 0;
    int leaf = 1;
    while (chain_len < MAX_CHAIN) {
        chain[chain_len++] = pc;
        uintptr_t old_sp = sp;
        enum nu_status st = nativeunwind_step(&pc, &sp, &fp, &lr, sp, stack_hi, leaf);
        if (st == NU_NO_CFI) {
            /* our own code keeps frame pointers */
            if (fp < sp || fp + 16 > stack_hi)
                break;
            pc = ((uintptr_t *)fp)[1];
            sp = fp + 16;
            fp = ((uintptr_t *)fp)[0];
        } else if (st != NU_OK) {
            break;
        }
        leaf = 0;
        if (pc == 0) {
            chain_ended = 1;
            break;
        }
        if (sp <= old_sp)
            break;
    }
}

static int compare_ints(const void *a, const void *b)
{
    if (!fired) {
        fired = 1;
        raise(SIGPROF); /* delivered here, inside qsort */
    }
    return *(const int *)a - *(const int *)b;
}

__attribute__((noinline)) static void sort_something(void)
{
    int v[64];
    for (int i = 0; i < 64; i++)
        v[i] = (i * 37) % 64;
    qsort(v, 64, sizeof v[0], compare_ints);
    __asm__ volatile("" ::: "memory");
}

static int in_function(uintptr_t pc, void (*fn)(void))
{
    return pc > (uintptr_t)fn && pc < (uintptr_t)fn + 256;
}

static void *unwind_thread(void *arg)
{
    (void)arg;
    pthread_attr_t attr;
    void *addr;
    size_t size;
    pthread_getattr_np(pthread_self(), &attr);
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    stack_lo = (uintptr_t)addr;
    stack_hi = (uintptr_t)addr + size;
    sort_something();
    return NULL;
}

static void test_unwind_through_qsort(void)
{
    nativeunwind_refresh_all();
    CHECK(nativeunwind_rows() > 1000);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGPROF, &sa, &old);
    fired = 0;
    /* on a thread of its own: its first frame is clone's, which ends the walk */
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, unwind_thread, NULL) == 0);
    pthread_join(t, NULL);
    sigaction(SIGPROF, &old, NULL);

    REQUIRE(chain_len > 3);
#ifdef __SANITIZE_ADDRESS__
    /* under ASan, qsort is libasan's interceptor, whose own frames are not
     * what this test is about; the plain build checks the walk through libc */
    return;
#endif
    int saw_compare = -1, saw_qsort = -1, saw_caller = -1, saw_thread = -1;
    for (int i = 0; i < chain_len; i++) {
        Dl_info info;
        if (in_function(chain[i] - (i > 0), (void (*)(void))compare_ints) && saw_compare < 0)
            saw_compare = i;
        else if (in_function(chain[i] - 1, sort_something) && saw_caller < 0)
            saw_caller = i;
        else if (in_function(chain[i] - 1, (void (*)(void))unwind_thread) && saw_thread < 0)
            saw_thread = i;
        else if (dladdr((void *)(chain[i] - 1), &info) && info.dli_fname &&
                 strstr(info.dli_fname, ".so") && saw_compare >= 0 && saw_caller < 0)
            saw_qsort = i; /* libc's qsort (or, under ASan, its interceptor) */
    }
    CHECK(saw_compare >= 0);
    CHECK(saw_qsort > saw_compare);  /* libc frames between the comparator ... */
    CHECK(saw_caller > saw_qsort);   /* ... and the function that called qsort */
    CHECK(saw_thread > saw_caller);
    CHECK(chain_ended);              /* up to clone's frame, whose return address is undefined */
    nativeunwind_shutdown();
}

/* ---- rows remembered by address --------------------------------------------- */

static int walk_qsort_once(uintptr_t *out, int max)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGPROF, &sa, &old);
    fired = 0;
    pthread_t t;
    if (pthread_create(&t, NULL, unwind_thread, NULL) != 0)
        return -1;
    pthread_join(t, NULL);
    sigaction(SIGPROF, &old, NULL);
    int n = chain_len < max ? chain_len : max;
    memcpy(out, chain, (size_t)n * sizeof *out);
    return chain_ended ? n : -1;
}

/* A walk through frames walked before takes their rows from the memo (no
 * module or function search): the same frames, every step; a memo entry
 * holds only for the snapshot of objects it was found in. */
static void test_memo_same_walk(void)
{
    nativeunwind_refresh_all();
    uintptr_t first[MAX_CHAIN], again[MAX_CHAIN];
    int n1 = walk_qsort_once(first, MAX_CHAIN);
    REQUIRE(n1 > 3);
    /* the return addresses of that walk in an object with CFI are
     * remembered, but for the few whose slot a later frame of the walk took
     * (the memo is direct-mapped, its slots hashed from the run-time
     * address: which frames collide changes from run to run with the
     * addresses; requiring all of them failed now and then) */
    int seen = 0, remembered = 0;
    for (int i = 1; i < n1; i++)
        if (nativeunwind_covers(first[i] - 1)) {
            remembered += nativeunwind_seen(first[i] - 1);
            seen++;
        }
    CHECK(seen > 0);
    CHECK(2 * remembered >= seen);
    int n2 = walk_qsort_once(again, MAX_CHAIN);
    CHECK(n2 == n1);
    for (int i = 0; i < n1 && i < n2; i++)
        CHECK(again[i] == first[i]);
    /* an object loaded: a new snapshot, the memo's entries are stale */
    void *lib = dlopen("libresolv.so.2", RTLD_NOW | RTLD_LOCAL);
    nativeunwind_refresh();
    if (lib) {
        for (int i = 1; i < n1; i++)
            CHECK(!nativeunwind_seen(first[i] - 1));
        n2 = walk_qsort_once(again, MAX_CHAIN);
        CHECK(n2 == n1);
        for (int i = 0; i < n1 && i < n2; i++)
            CHECK(again[i] == first[i]);
        dlclose(lib);
    }
    nativeunwind_shutdown();
}

/* ---- a thread off its own stack --------------------------------------------- */

static ucontext_t main_ctx, coro_ctx;

static void on_coroutine_stack(void)
{
    raise(SIGPROF); /* sampled here, on a stack that is not the thread's */
}

/* The entry at `at` words into t's ring: its depth and flags. */
static void entry_at(const struct sthread *t, uint64_t at, uint64_t *depth, uint64_t *flags)
{
    *depth = t->ring[(at + RING_DEPTH) & t->ring_mask];
    *flags = t->ring[(at + RING_FLAGS) & t->ring_mask];
}

/* A thread whose stack pointer is outside its own stack (a coroutine's
 * stack here; the runtime's alternate signal stack alike) is sampled by
 * its leaf alone: the snapshot's mapping there may be unmapped by the time
 * of the walk, so nothing past the leaf is read, and the thread's own
 * bounds are kept for its next sample, which walks its stack whole. */
static void test_sample_off_own_stack(void)
{
    REQUIRE(thread_rings_init() == 0);
    nativeunwind_refresh_all();
    pid_t tid = (pid_t)syscall(SYS_gettid);
    struct sthread *t = thread_rings_add(tid, 1, 64);
    REQUIRE(t != NULL);
    pthread_attr_t attr;
    void *addr;
    size_t size;
    REQUIRE(pthread_getattr_np(pthread_self(), &attr) == 0);
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    t->stack_lo = (uintptr_t)addr;
    t->stack_hi = (uintptr_t)addr + size;
    size_t coro_size = 256 << 10;
    void *coro = mmap(NULL, coro_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(coro != MAP_FAILED);
    REQUIRE(stack_bounds_refresh() == 0); /* the coroutine's stack is in the snapshot */
    REQUIRE(handler_install(SIGPROF) == 0);

    raise(SIGPROF); /* on its own stack: walked */
    uint64_t first = atomic_load(&t->head), depth, flags;
    REQUIRE(first > 0);
    entry_at(t, 0, &depth, &flags);
    CHECK(depth > 1);
    CHECK(!(flags & WALK_NO_STACK));

    getcontext(&coro_ctx);
    coro_ctx.uc_stack.ss_sp = coro;
    coro_ctx.uc_stack.ss_size = coro_size;
    coro_ctx.uc_link = &main_ctx;
    makecontext(&coro_ctx, on_coroutine_stack, 0);
    REQUIRE(swapcontext(&main_ctx, &coro_ctx) == 0);
    uint64_t second = atomic_load(&t->head);
    REQUIRE(second > first);
    entry_at(t, first, &depth, &flags);
    CHECK_EQ(depth, 1);
    CHECK(flags & WALK_NO_STACK);
    CHECK(t->stack_lo == (uintptr_t)addr && t->stack_hi == (uintptr_t)addr + size);

    raise(SIGPROF); /* back on its own stack */
    entry_at(t, second, &depth, &flags);
    CHECK(depth > 1);
    CHECK(!(flags & WALK_NO_STACK));

    thread_rings_retire(t);
    signal(SIGPROF, SIG_DFL);
    munmap(coro, coro_size);
    stack_bounds_shutdown();
    thread_rings_shutdown();
    nativeunwind_shutdown();
}

/* ---- issue 20.7: the tables, read in a handler while the collector parses --- */

/* The handler's lookups read a library's table once it is published by the
 * release store of its `ready`, and only then (before, two of them read the
 * table with no acquire of `ready`: a formal race, a table's row count seen
 * with the row pointer of before).  No plain build can fail this; the
 * thread sanitizer does (make unit-tsan runs the tsan_ tests). */
static _Atomic int stop_reading;

static void *read_tables(void *arg)
{
    uintptr_t at = (uintptr_t)arg;
    uintptr_t found = 0;
    while (!atomic_load(&stop_reading))
        found += (uintptr_t)nativeunwind_covers(at) + (uintptr_t)nativeunwind_is_sigreturn(at);
    return (void *)found;
}

static void test_tsan_tables_published(void)
{
    REQUIRE(thread_rings_init() == 0);
    nativeunwind_list(); /* every library known, no table parsed */
    uintptr_t in_libc = (uintptr_t)(void *)getppid + 1;
    atomic_store(&stop_reading, 0);
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, read_tables, (void *)in_libc) == 0);
    nativeunwind_want_all();
    nativeunwind_refresh(); /* parsed and published while the thread reads */
    usleep(20000);
    atomic_store(&stop_reading, 1);
    pthread_join(t, NULL);
    CHECK(nativeunwind_covers(in_libc));
    nativeunwind_shutdown();
    thread_rings_reclaim();
}

/* Walkers on several threads fill and read the memo's slots at once (a
 * sequence lock each): stepping from addresses spread over a few of libc's
 * functions, on a stack of zeros, so that slots are written and read
 * concurrently.  The thread sanitizer checks the protocol. */
static void *step_many(void *arg)
{
    uintptr_t base = (uintptr_t)arg, found = 0;
    uintptr_t stack[64] = {0};
    for (int round = 0; round < 2000; round++) {
        for (uintptr_t k = 1; k < 48; k += 3) {
            uintptr_t pc = base + k, sp = (uintptr_t)&stack[8], fp = sp, lr = 0;
            found += nativeunwind_step(&pc, &sp, &fp, &lr, (uintptr_t)stack,
                                       (uintptr_t)(stack + 64), 1) == NU_OK;
            found += (uintptr_t)nativeunwind_seen(base + k);
        }
    }
    return (void *)found;
}

static void test_tsan_memo_shared(void)
{
    REQUIRE(thread_rings_init() == 0);
    nativeunwind_list();
    uintptr_t fns[3] = {(uintptr_t)(void *)getppid, (uintptr_t)(void *)qsort,
                        (uintptr_t)(void *)getpid};
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        REQUIRE(pthread_create(&t[i], NULL, step_many, (void *)fns[i % 3]) == 0);
    nativeunwind_refresh(); /* a new snapshot meanwhile: entries go stale */
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    /* after the threads: a step remembers, under the snapshot now */
    uintptr_t stack[64] = {0};
    uintptr_t pc = fns[1] + 1, sp = (uintptr_t)&stack[8], fp = sp, lr = 0;
    nativeunwind_step(&pc, &sp, &fp, &lr, (uintptr_t)stack, (uintptr_t)(stack + 64), 1);
    CHECK(nativeunwind_seen(fns[1] + 1) || !nativeunwind_covers(fns[1] + 1));
    nativeunwind_shutdown();
    thread_rings_reclaim();
}

/* ---- which objects are read in place -------------------------------------- */

/* The C library is in the program's DT_NEEDED closure, never unloaded: its
 * rows are read in place from the first lookup.  A library dlopen'd later
 * may be dlclose'd at any moment: a lookup there copies what it reads
 * through the kernel (no fault where nothing is mapped any more) and asks
 * the collector for the function, which decodes it under the loader's
 * lock for the next lookups; once unloaded, nothing of it is found. */
static void test_resident_objects(void)
{
    REQUIRE(thread_rings_init() == 0);
    nativeunwind_list();
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(libc);
    uintptr_t q = (uintptr_t)dlsym(libc, "qsort");
    dlclose(libc);
    CHECK(nativeunwind_resident(q));
    /* the vDSO too (wall mode's leaves in clock_gettime): a walk from it
     * guessed by frame pointers gave a stale caller (t_boundaries) */
    uintptr_t vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
    if (vdso)
        CHECK(nativeunwind_resident(vdso + 0x100));
    CHECK(nativeunwind_covers(q));
    size_t rows = nativeunwind_rows();
    nativeunwind_refresh(); /* the lookup asked for qsort: now in libc's cache */
    CHECK(nativeunwind_rows() > rows);
    CHECK(nativeunwind_covers(q));

    void *lib = dlopen("libresolv.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "  (skipped: no libresolv.so.2)\n");
        goto out;
    }
    uintptr_t fn = (uintptr_t)dlsym(lib, "__b64_ntop"), other = (uintptr_t)dlsym(lib, "__b64_pton");
    REQUIRE(fn && other);
    nativeunwind_refresh();
    CHECK(!nativeunwind_resident(fn));
    CHECK(nativeunwind_covers(fn)); /* copied where it is mapped, not read in place */
    nativeunwind_refresh();         /* and asked for: the collector decodes it */
    CHECK(nativeunwind_covers(fn));
    CHECK(nativeunwind_covers(fn + 1));
    dlclose(lib);
    /* unmapped, the list of objects not refreshed yet: a function never
     * decoded cannot be copied, and the lookup says so without a fault */
    CHECK(!nativeunwind_covers(other));
    nativeunwind_refresh();
    CHECK(!nativeunwind_covers(fn));
out:
    nativeunwind_shutdown();
    thread_rings_shutdown();
}

/* A library loaded since the objects were last listed (its initialization
 * runs in the first milliseconds, before the loop looks again): where the
 * walker would guess, a step from its code finds its CFI through the
 * kernel's answer for the mapping and copies of its headers; once it is
 * unloaded, a step there finds nothing, without a fault.  `path` is laid
 * out by GNU ld (libresolv: each segment at its file offset) or by lld
 * (the runtime's libclrjit.so: its text a page further in memory than in
 * the file). */
static void unlisted_object(const char *path, const char *symbol)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "  (skipped: no %s)\n", path);
        return;
    }
    uintptr_t fn = (uintptr_t)dlsym(lib, symbol);
    REQUIRE(fn);
    /* at its first instruction the return address is on top of the stack */
    uintptr_t stack[32] = {0};
    stack[8] = 0x123456;
    uintptr_t pc = fn, sp = (uintptr_t)&stack[8], fp = 0, lr = 0x123456;
    enum nu_status st = nativeunwind_step(&pc, &sp, &fp, &lr, (uintptr_t)stack,
                                          (uintptr_t)(stack + 32), 1);
    CHECK(st == NU_NO_CFI && pc == fn); /* in no listed object */
    st = nativeunwind_step_unlisted(&pc, &sp, &fp, &lr, (uintptr_t)stack,
                                    (uintptr_t)(stack + 32), 1);
    if (st != NU_OK)
        printf("  %s: %d\n", path, (int)st);
    CHECK_EQ(st, NU_OK);
    CHECK_EQ(pc, 0x123456);
#if !defined(__aarch64__)
    CHECK_EQ(sp, (uintptr_t)&stack[9]);
#endif
    dlclose(lib);
    pc = fn;
    sp = (uintptr_t)&stack[8];
    st = nativeunwind_step_unlisted(&pc, &sp, &fp, &lr, (uintptr_t)stack,
                                    (uintptr_t)(stack + 32), 1);
    /* unmapped (or kept by the loader: then found again), never a fault */
    CHECK(st == NU_NO_CFI || st == NU_OK);
}

static void test_unlisted_object(void)
{
    REQUIRE(thread_rings_init() == 0);
    if (!vma_query_start(open("/proc/self/maps", O_RDONLY | O_CLOEXEC))) {
        thread_rings_shutdown();
        return; /* an older kernel: test_vma_query says whether it should */
    }
    nativeunwind_list();
    unlisted_object("libresolv.so.2", "__b64_ntop");
    /* a runtime's JIT, where tests/apps/runtimes.sh or the SDK put one */
    glob_t g;
    const char *root = getenv("DOTNET_ROOT");
    char pattern[512];
    snprintf(pattern, sizeof pattern, "%s/shared/Microsoft.NETCore.App/*/libclrjit.so",
             root && *root ? root : "/usr/share/dotnet");
    if (glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0)
        unlisted_object(g.gl_pathv[0], "getJit");
    else
        fprintf(stderr, "  (skipped: no %s)\n", pattern);
    globfree(&g);
    /* a listed object's code is nativeunwind_step's, never asked of the kernel */
    uintptr_t stack[32] = {0};
    uintptr_t pc = (uintptr_t)(void *)getppid, sp = (uintptr_t)&stack[8], fp = 0, lr = 0;
    CHECK_EQ(nativeunwind_step_unlisted(&pc, &sp, &fp, &lr, (uintptr_t)stack,
                                        (uintptr_t)(stack + 32), 1), NU_NO_CFI);
    vma_query_stop_unused();
    nativeunwind_shutdown();
    thread_rings_shutdown();
}

void suite_nativeunwind(void)
{
    RUN(test_unwind_through_qsort);
    RUN(test_memo_same_walk);
    RUN(test_sample_off_own_stack);
    RUN(test_tsan_tables_published);
    RUN(test_tsan_memo_shared);
    RUN(test_resident_objects);
    RUN(test_unlisted_object);
}
