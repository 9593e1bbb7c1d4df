/*
 * sampler_signal: the signal sampler (the default).  Each thread is
 * interrupted where it is, by a signal, and the handler (sighandler.c)
 * walks its stack, managed and native frames alike, into the thread's ring
 * (sigslots.h).  This thread, the collector, does everything else, off the
 * signal path:
 *
 *   - keeps the set of threads: the process's tasks (/proc/self/task,
 *     rescanned every SCAN_NS and whenever the runtime reports a thread
 *     change), each with its ring, and in cpu mode its own CPU-time timer
 *     (timer_create on the thread's CPU clock, SIGEV_THREAD_ID), so a
 *     thread is sampled in proportion to the CPU it uses, and an idle one
 *     costs nothing;
 *   - in wall mode sends the signal to every thread each tick (tgkill),
 *     except a thread whose CPU time has not moved since its last sample:
 *     it has not run, so its stack is the one already recorded, which is
 *     reused without waking it;
 *   - drains the rings, turns instruction pointers into frames (resolve.c),
 *     repairs the caller of a managed leaf caught outside its frame
 *     (leaf.c), and writes samples;
 *   - keeps the handler's tables current: stack mappings, native unwind
 *     tables, the managed code map.
 *
 * Nothing is lost silently: full rings count dropped samples, threads whose
 * timer could not be created are counted, walks that ended early end in
 * [unknown] and are counted.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/signal/leaf.h"
#include "agent/log.h"
#include "agent/signal/nativeunwind.h"
#include "agent/osthread.h"
#include "agent/resolve.h"
#include "agent/signal/handler.h"
#include "agent/signal/slots.h"
#include "agent/signal/stackmaps.h"
#include "agent/threads.h"
#include "common/mem.h"

#define SCAN_NS 250000000ull  /* rescan the process's threads */
#define RESCAN_NS 30000000ull /* ... at most this often when the runtime reports changes */
#define DRAIN_NS 10000000ull  /* cpu mode: empty the rings */
#define MAPS_NS 50000000ull   /* re-read stack mappings for new threads at most this often */
/* Wall mode: a thread whose CPU time moved less than this since its last
 * sample (the tail of our own handler, sigreturn, a restarted syscall) has
 * not run: its last stack is reused. */
#define WALL_IDLE_NS 20000ull

struct sigsampler {
    struct agent *a;
    uint32_t event;
    pid_t self;
    struct sthread *threads; /* live, ours */
    uint32_t next_id;
    uint64_t scan_gen;
    uint64_t last_scan_ns;
    uint64_t seen_changes;   /* threads_changes() at the last scan */
    int maps_stale;          /* a thread was added since the last stackmaps refresh */
    int clocks_pending;      /* threads were added whose clocks are not started */
    uint64_t maps_ns;        /* when the stack mappings were last read */
    int posix_clock;         /* POSIX CPU timers: asked for, or perf_event_open failed */
    int perf_exclude_kernel; /* perf_event_paranoid allows user time only */
    uint64_t random;         /* state of first_phase */          /* a thread was added since the last stackmaps refresh */
    struct thread_view *views;
    size_t views_cap;
    struct resolver res;
    struct map64 leaf_cache; /* leaf pc -> where its return address is (leaf_caller) */
    uint64_t *record;        /* one ring record, unwrapped */
    size_t record_cap;
    uint32_t *frames;        /* one stack being assembled, leaf first */
    size_t frames_cap;
};

/* ---- threads --------------------------------------------------------------- */

/* A random point in (0, interval], for the first expiry of a thread's
 * clock (xorshift64; no quality needed beyond spreading phases). */
static uint64_t first_phase(struct sigsampler *s)
{
    uint64_t x = s->random;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s->random = x;
    return 1 + x % s->a->cfg.interval_ns;
}

/* The precise clock: a perf_event counting the thread's task-clock, which
 * signals at each period of CPU time, to the nanosecond (POSIX CPU timers
 * are checked only at the scheduler tick, 4 ms here).  Returns 0, or -1
 * when perf_event is not available (then the POSIX timer serves). */
static int start_perf(struct sigsampler *s, struct sthread *t)
{
    if (s->posix_clock)
        return -1;
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    /* the first period is a random part of the interval: a thread that
     * lives for less than one interval is then sampled with the right
     * probability instead of never */
    attr.sample_period = first_phase(s);
    t->perf_period = s->a->cfg.interval_ns;
    atomic_store(&t->perf_first, 1);
    attr.wakeup_events = 1;
    attr.exclude_kernel = (uint64_t)s->perf_exclude_kernel;
    attr.exclude_hv = 1;
    attr.disabled = 1;
    int fd = (int)syscall(SYS_perf_event_open, &attr, t->tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && (errno == EACCES || errno == EPERM) && !s->perf_exclude_kernel) {
        s->perf_exclude_kernel = 1; /* perf_event_paranoid 2: user time only */
        return start_perf(s, t);
    }
    if (fd < 0) {
        if (errno != ESRCH) {
            s->posix_clock = 1;
            log_info("perf_event unavailable (%s): CPU timers instead", strerror(errno));
        }
        return -1;
    }
    struct f_owner_ex owner = {F_OWNER_TID, t->tid};
    if (fcntl(fd, F_SETFL, O_ASYNC) < 0 || fcntl(fd, F_SETSIG, s->a->cfg.signal) < 0 ||
        fcntl(fd, F_SETOWN_EX, &owner) < 0) {
        close(fd);
        return -1;
    }
    t->perf_fd = fd; /* before the first signal, which the handler checks it against */
    if (ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) < 0) {
        t->perf_fd = -1;
        close(fd);
        return -1;
    }
    return 0;
}

static void stop_clock(struct sthread *t)
{
    if (t->has_timer) {
        timer_delete(t->timer);
        t->has_timer = 0;
    }
    if (t->perf_fd >= 0) {
        ioctl(t->perf_fd, PERF_EVENT_IOC_DISABLE, 0);
        close(t->perf_fd);
        t->perf_fd = -1;
    }
}

static void start_timer(struct sigsampler *s, struct sthread *t)
{
    if (start_perf(s, t) == 0)
        return;
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = s->a->cfg.signal;
    sev._sigev_un._tid = t->tid;
    uint64_t ns = s->a->cfg.interval_ns;
    struct itimerspec its;
    its.it_interval.tv_sec = (time_t)(ns / 1000000000ull);
    its.it_interval.tv_nsec = (long)(ns % 1000000000ull);
    uint64_t phase = first_phase(s);
    its.it_value.tv_sec = (time_t)(phase / 1000000000ull);
    its.it_value.tv_nsec = (long)(phase % 1000000000ull);
    if (timer_create(osthread_cpu_clock(t->tid), &sev, &t->timer) < 0) {
        t->clock_failed = 1;
        /* the thread is gone already (ESRCH/EINVAL), or no timers are left */
        if (errno != EINVAL && errno != ESRCH)
            recorder_count(&s->a->rec, RECORDER_UNSAMPLED_THREADS, 1);
        return;
    }
    t->has_timer = 1;
    timer_settime(t->timer, 0, &its, NULL);
}

static void name_thread(struct sigsampler *s, struct sthread *t, const char *name)
{
    recorder_thread(&s->a->rec, t->id, (uint64_t)t->tid, name && name[0] ? name : NULL);
}

/* lo/hi: the thread's stack when the runtime told us (else 0): then no
 * snapshot of the mappings is needed for it. */
static struct sthread *add_thread(struct sigsampler *s, pid_t tid, uintptr_t lo, uintptr_t hi)
{
    struct sthread *t = slots_add(tid, s->next_id, s->a->cfg.max_depth);
    if (!t) {
        recorder_count(&s->a->rec, RECORDER_UNSAMPLED_THREADS, 1);
        return NULL;
    }
    s->next_id++;
    t->next = s->threads;
    s->threads = t;
    /* its stack is in no snapshot yet: the handler may not use older ones
     * for it, and its clock starts once a new snapshot is read
     * (start_clocks) */
    if (lo && hi > lo) {
        t->stack_lo = lo;
        t->stack_hi = hi;
        t->maps_generation = stackmaps_generation();
    } else {
        t->maps_generation = stackmaps_generation() + 1;
        s->maps_stale = 1;
    }
    s->clocks_pending = 1;
    char name[96];
    osthread_name(tid, name, sizeof name);
    name_thread(s, t, name);
    t->name_checks = 1;
    return t;
}

static void drain(struct sigsampler *s, struct sthread *t);

static void remove_thread(struct sigsampler *s, struct sthread *t)
{
    stop_clock(t);
    drain(s, t); /* what it recorded before it died */
    slots_retire(t);
}

/* After threads were added: one read of /proc/self/maps for all of their
 * stacks, then their CPU clocks (cpu mode; wall mode signals them from the
 * next tick). */
static void start_clocks(struct sigsampler *s, uint64_t now)
{
    if (!s->clocks_pending)
        return;
    if (s->maps_stale && stackmaps_refresh() == 0) {
        s->maps_stale = 0;
        s->maps_ns = now;
    }
    s->clocks_pending = 0;
    if (s->a->cfg.event != CONFIG_EVENT_CPU)
        return;
    for (struct sthread *t = s->threads; t; t = t->next)
        if (!t->has_timer && t->perf_fd < 0 && !t->clock_failed)
            start_timer(s, t);
}

/* Names managed threads after the runtime's view (Thread.Name), native
 * ones after their OS name, read again once in case it was set late. */
static void update_names(struct sigsampler *s)
{
    long count = threads_snapshot(&s->views, &s->views_cap);
    for (long i = 0; i < count; i++) {
        const struct thread_view *v = &s->views[i];
        struct sthread *t = v->os_tid ? slots_lookup(v->os_tid) : NULL;
        if (!t || (t->managed && t->name_version == v->name_version + 1))
            continue;
        t->managed = 1;
        t->name_version = v->name_version + 1;
        if (v->name[0])
            name_thread(s, t, v->name);
        else if (v->name_version == 0 && t->name_checks < 2) {
            char name[96];
            osthread_name(t->tid, name, sizeof name);
            name_thread(s, t, name);
            t->name_checks = 2;
        }
    }
    for (struct sthread *t = s->threads; t; t = t->next) {
        if (t->managed || t->name_checks >= 2)
            continue;
        char name[96];
        osthread_name(t->tid, name, sizeof name);
        name_thread(s, t, name);
        t->name_checks = 2;
    }
}

/* Adds the threads the runtime has reported (cheaper than reading
 * /proc/self/task: no directory of every thread to list). */
static void add_managed(struct sigsampler *s)
{
    long count = threads_snapshot(&s->views, &s->views_cap);
    int added = 0;
    for (long i = 0; i < count; i++) {
        const struct thread_view *v = &s->views[i];
        if (v->os_tid && v->os_tid != s->self && !slots_lookup(v->os_tid) &&
            add_thread(s, v->os_tid, v->stack_lo, v->stack_hi))
            added = 1;
    }
    if (added) {
        start_clocks(s, recorder_now_ns());
        update_names(s);
    }
}

/* Brings the thread set up to date with /proc/self/task. */
static void scan(struct sigsampler *s, uint64_t now)
{
    s->last_scan_ns = now;
    s->seen_changes = threads_changes();
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    uint64_t gen = ++s->scan_gen;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (*end || tid <= 0 || tid == s->self)
            continue;
        struct sthread *t = slots_lookup((pid_t)tid);
        if (!t)
            t = add_thread(s, (pid_t)tid, 0, 0);
        if (t)
            t->seen_scan = gen;
    }
    closedir(d);
    for (struct sthread **p = &s->threads; *p;) {
        struct sthread *t = *p;
        if (t->seen_scan == gen) {
            p = &t->next;
            continue;
        }
        *p = t->next;
        remove_thread(s, t);
    }
    start_clocks(s, now);
    update_names(s);
}

/* ---- samples --------------------------------------------------------------- */

static size_t read_code(uintptr_t at, uint8_t *out, size_t n)
{
    /* through the kernel, so that code unloaded meanwhile is an error, not
     * a crash */
    struct iovec local = {out, n}, remote = {(void *)at, n};
    ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    return got < 0 ? 0 : (size_t)got;
}

/* The return address a managed leaf has not (or no longer) framed, from
 * the words copied off the top of its stack; 0 when the walk was right. */
static uintptr_t leaf_caller(struct sigsampler *s, const struct code_range *range, uintptr_t pc,
                             const uint64_t *top, uint32_t top_words)
{
    /* the answer depends only on the code at pc: cached per pc (code never
     * changes under an address until it is unloaded, which clears the cache)
     * as offset + 1, or 0 when the walk was right */
    uint32_t cached;
    if (!map64_get(&s->leaf_cache, pc, &cached)) {
        uint8_t prologue[64], at_pc[32];
        size_t np = read_code(range->method_start, prologue, sizeof prologue);
        size_t na = read_code(pc, at_pc, sizeof at_pc);
        uint32_t offset = 0;
        enum leaf_answer answer =
            leaf_analyze(prologue, np, at_pc, na, pc - range->method_start, &offset);
        cached = answer == LEAF_RA_AT && offset % 8 == 0 ? offset + 1 : 0;
        map64_put(&s->leaf_cache, pc, cached);
    }
    if (!cached || (cached - 1) / 8 >= top_words)
        return 0;
    return (uintptr_t)top[(cached - 1) / 8];
}

/* A leaf running on-stack-replaced (OSR) code: the OSR method's frame sits
 * below its tier-0 frame, its return address points into the tier-0 code
 * (ips[1], the same method), and the frame pointer it saved is the one of
 * the tier-0 frame's caller, so the frame-pointer walk skips that caller.
 * The tier-0 frame still holds the pair (that saved frame pointer, return
 * address into the caller) a few words up the stack: found among the
 * copied top words, the caller's return address is returned, to stand in
 * for the tier-0 frame (the same call of the same method).  0 when the
 * leaf is not such a frame.  A recursion across tiers (tier-1 code called
 * by its own tier-0 code) never matches: there the saved frame pointer is
 * the address of the tier-0 frame, not a value stored in it. */
static uintptr_t osr_leaf_caller(const uint64_t *rec, const uint64_t *top, uint32_t top_words,
                                 const uint64_t *ips, uint32_t depth)
{
    if (depth < 2)
        return 0;
    const struct code_range *leaf = resolve_managed((uintptr_t)ips[0]);
    const struct code_range *tier0 = resolve_managed((uintptr_t)ips[1] - 1);
    if (!leaf || !tier0 || leaf->function != tier0->function ||
        leaf->method_start == tier0->method_start)
        return 0;
    uint64_t rsp = rec[3], rbp = rec[4];
    if (rbp < rsp || (rbp - rsp) % 8 || (rbp - rsp) / 8 + 1 >= top_words)
        return 0;
    uint32_t at = (uint32_t)((rbp - rsp) / 8);
    uint64_t saved_fp = top[at];
    for (uint32_t j = at + 2; j + 1 < top_words; j++) {
        if (top[j] == saved_fp && resolve_managed((uintptr_t)top[j + 1] - 1))
            return (uintptr_t)top[j + 1];
    }
    return 0;
}

/* Is ips[k + 1] the pseudo return address of an OSR method's frame: the
 * same method as ips[k], in another code version, right after the tier-0
 * code's call to the runtime's patchpoint helper (a direct call into native
 * code)?  A genuine recursive call is a call to managed code (through an
 * indirection cell or a stub), so it never matches. */
static int osr_pseudo_frame(const uint64_t *ips, uint32_t k)
{
    const struct code_range *a = resolve_managed((uintptr_t)ips[k] - (k > 0));
    const struct code_range *b = resolve_managed((uintptr_t)ips[k + 1] - 1);
    if (!a || !b || a->function != b->function || a->method_start == b->method_start)
        return 0;
    uint8_t call[5];
    if (read_code((uintptr_t)ips[k + 1] - 5, call, 5) != 5 || call[0] != 0xe8)
        return 0;
    int32_t rel;
    memcpy(&rel, call + 1, 4);
    uintptr_t target = (uintptr_t)ips[k + 1] + (uintptr_t)(intptr_t)rel;
    Dl_info info;
    return !resolve_managed(target) && dladdr((void *)target, &info) && info.dli_fbase;
}

static void put_frame(struct sigsampler *s, uint32_t *n, uint32_t frame)
{
    uint32_t *grown = mem_grow(s->frames, &s->frames_cap, *n + 1, sizeof *grown);
    if (!grown)
        return;
    s->frames = grown;
    s->frames[(*n)++] = frame;
}

/* Turns one ring record into a sample. */
static void process(struct sigsampler *s, struct sthread *t, const uint64_t *rec)
{
    struct recorder *out = &s->a->rec;
    uint32_t depth = handler_record_depth(rec[0]);
    uint32_t flags = handler_record_flags(rec[0]);
    uint64_t time = rec[1];
    uint64_t weight = rec[2] & 0xffffffffu;
    uint32_t top_words = (uint32_t)(rec[2] >> 32);
    uint64_t cpu = rec[5];
    const uint64_t *top = rec + SLOTS_HEADER_WORDS;
    const uint64_t *ips = top + top_words;

    uintptr_t osr_caller = osr_leaf_caller(rec, top, top_words, ips, depth);
    uint32_t n = 0;
    for (uint32_t k = 0; k < depth; k++) {
        if (k == 1 && osr_caller) {
            /* the tier-0 frame is the same call as the OSR leaf: one frame */
            put_frame(s, &n, resolve_ip(&s->res, osr_caller, 1));
            continue;
        }
        if (k > 0 && osr_pseudo_frame(ips, k - 1)) {
            /* the same call again, in its tier-0 frame: shown once (the
             * frame that called it is not on the frame-pointer chain) */
            recorder_count(out, RECORDER_OSR_FRAMES, 1);
            continue;
        }
        put_frame(s, &n, resolve_ip(&s->res, (uintptr_t)ips[k], k > 0));
        if (k == 0 && !(flags & HANDLER_LEAF_CFI)) {
            const struct code_range *range = resolve_managed((uintptr_t)ips[0]);
            uintptr_t caller = range ? leaf_caller(s, range, (uintptr_t)ips[0], top, top_words) : 0;
            /* only a word that is a return address into managed code: the
             * analysis can be wrong about code it half understands (OSR
             * methods, which inherit their tier-0 frame) */
            if (caller && (depth < 2 || caller != ips[1]) && resolve_managed(caller - 1))
                put_frame(s, &n, resolve_ip(&s->res, caller, 1));
        }
    }
    if (flags & HANDLER_TRUNCATED) {
        put_frame(s, &n, recorder_synthetic(out, "[truncated]"));
        recorder_count(out, RECORDER_TRUNCATED, 1);
    } else if (flags & (HANDLER_NO_STACK | HANDLER_STOP_BOUNDS | HANDLER_STOP_RULE)) {
        /* the walk stopped before the thread's first frame */
        put_frame(s, &n, recorder_synthetic(out, "[unknown]"));
        recorder_count(out, RECORDER_FAILED_WALKS, 1);
    }
    for (uint32_t k = 0; k < n; k++) {
        if (!s->frames[k]) {
            recorder_count(out, RECORDER_DROPPED, 1);
            return;
        }
    }
    uint32_t stack = n ? recorder_stack(out, s->frames, n) : 0;
    if (!stack) {
        recorder_count(out, RECORDER_DROPPED, 1);
        return;
    }
    recorder_sample(out, s->event, t->id, time, stack, weight);
    t->last_stack = stack;
    /* a stack taken before its thread's stack mapping was known is the leaf
     * alone: not one to repeat while the thread waits */
    t->last_stack_whole = !(flags & HANDLER_NO_STACK);
    if (cpu)
        t->cpu_seen = cpu;
}

static void drain(struct sigsampler *s, struct sthread *t)
{
    uint64_t tail = atomic_load_explicit(&t->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
    while (tail < head) {
        uint64_t w0 = t->ring[tail & t->ring_mask];
        uint32_t words = handler_record_words(w0);
        if (words < SLOTS_HEADER_WORDS || words > head - tail) {
            /* cannot happen with a correct handler; never loop on it */
            recorder_count(&s->a->rec, RECORDER_DROPPED, 1);
            tail = head;
            break;
        }
        uint64_t *rec = mem_grow(s->record, &s->record_cap, words, sizeof *rec);
        if (rec) {
            s->record = rec;
            for (uint32_t i = 0; i < words; i++)
                rec[i] = t->ring[(tail + i) & t->ring_mask];
            process(s, t, rec);
        } else {
            recorder_count(&s->a->rec, RECORDER_DROPPED, 1);
        }
        tail += words;
    }
    atomic_store_explicit(&t->tail, tail, memory_order_release);
    uint64_t dropped = atomic_load_explicit(&t->dropped, memory_order_relaxed);
    if (dropped > t->dropped_reported) {
        recorder_count(&s->a->rec, RECORDER_DROPPED, dropped - t->dropped_reported);
        t->dropped_reported = dropped;
    }
}

/* Wall mode: one tick for every thread. */
static void wall_tick(struct sigsampler *s, uint64_t now)
{
    pid_t pid = getpid();
    recorder_count(&s->a->rec, RECORDER_TICKS, 1);
    for (struct sthread *t = s->threads; t; t = t->next) {
        uint64_t cpu = osthread_cpu_ns(t->tid);
        if (cpu == UINT64_MAX)
            continue; /* exiting; the next scan removes it */
        int pending = atomic_load(&t->wall_weight) != 0;
        if (!pending && t->last_stack && t->last_stack_whole && cpu - t->cpu_seen < WALL_IDLE_NS) {
            recorder_sample(&s->a->rec, s->event, t->id, now, t->last_stack, 1);
            continue;
        }
        if (atomic_fetch_add(&t->wall_weight, 1) == 0)
            syscall(SYS_tgkill, pid, t->tid, s->a->cfg.signal);
    }
}

/* ---- the collector --------------------------------------------------------- */

static void cycle(struct sigsampler *s, uint64_t now)
{
    /* unwind tables first: a thread's first samples should already find
     * them */
    nativeunwind_refresh();
    /* the runtime's reports (a thread died, was renamed) bring the scan
     * forward, but not to more than one every RESCAN_NS: a burst of new
     * threads is handled by add_managed, not by listing them all again */
    if (now - s->last_scan_ns >= SCAN_NS ||
        (threads_changes() != s->seen_changes && now - s->last_scan_ns >= RESCAN_NS))
        scan(s, now);
    /* new threads have new stacks; reading /proc/self/maps costs in
     * proportion to the threads, so a burst of new threads is read in once
     * every MAPS_NS (a handler that finds no mapping meanwhile records its
     * leaf alone and asks for a refresh) */
    if ((s->maps_stale && now - s->maps_ns >= MAPS_NS) || stackmaps_wanted()) {
        if (stackmaps_refresh() == 0) {
            s->maps_stale = 0;
            s->maps_ns = now;
        }
    }
    codemap_update();
    if (s->event == FMT_EVENT_WALL)
        wall_tick(s, now);
    for (struct sthread *t = s->threads; t; t = t->next)
        drain(s, t);
    slots_reclaim();
}

/* An unload callback's thread, under ids_lock (agent_code_unloading):
 * names every sample taken so far and every method compiled so far while
 * their ids are valid, then forgets what the runtime is about to free and
 * reuse.  The unloaded code is unreachable, so no later sample holds it. */
static void on_unload(struct agent *a, ModuleID module, FunctionID function)
{
    struct sigsampler *s = a->sampler_state;
    if (module || function) {
        codemap_update();
        for (struct sthread *t = s->threads; t; t = t->next)
            drain(s, t);
    }
    codemap_forget(function);
    names_forget(&a->names, module, function);
    resolve_forget(&s->res);
    map64_clear(&s->leaf_cache);
}

/* Stops every timer, drains what is left, and waits (briefly) until no
 * handler can be using the threads' state before it is freed. */
static void finish(struct sigsampler *s)
{
    for (struct sthread *t = s->threads; t; t = t->next)
        stop_clock(t);
    while (s->threads) {
        struct sthread *t = s->threads;
        s->threads = t->next;
        drain(s, t);
        slots_retire(t);
    }
    recorder_count(&s->a->rec, RECORDER_ORPHAN_SIGNALS, slots_orphan_signals());
    recorder_count(&s->a->rec, RECORDER_SAMPLER_CPU_NS, osthread_cpu_ns(s->self));
    recorder_flush(&s->a->rec);
    nativeunwind_shutdown();
    stackmaps_shutdown();
    slots_shutdown();
    resolve_free(&s->res);
    codemap_shutdown();
}

int signal_sampler_prepare(struct agent *a)
{
    if (slots_init() < 0) {
        log_error("cannot map the thread table: %s", strerror(errno));
        return -1;
    }
    if (handler_install(a->cfg.signal) < 0) {
        log_error("signal %d (%s) is already in use in this process; choose another with "
                  "--signal", a->cfg.signal, strsignal(a->cfg.signal));
        return -1;
    }
    stackmaps_refresh();
    codemap_init(a->info, a->info_version);
    return 0;
}

void *signal_sampler_main(void *arg)
{
    struct sigsampler s;
    memset(&s, 0, sizeof s);
    s.a = arg;
    s.event = s.a->cfg.event == CONFIG_EVENT_WALL ? FMT_EVENT_WALL : FMT_EVENT_CPU;
    s.self = (pid_t)syscall(SYS_gettid);
    s.next_id = 1;
    s.random = recorder_now_ns() ^ ((uint64_t)s.self << 32) ^ 0x9e3779b97f4a7c15ull;
    resolve_init(&s.res, s.a);
    map64_init(&s.leaf_cache);
    prctl(PR_SET_NAME, "corscope-sample");
    HRESULT hr = s.a->info->lpVtbl->InitializeCurrentThread(s.a->info);
    if (hr < 0)
        log_warn("InitializeCurrentThread failed: 0x%08x", (unsigned)hr);

    /* ids_lock is held all the time but the sleep (agent.h) */
    agent_ids_lock(s.a);
    s.a->sampler_state = &s;
    s.a->on_unload = on_unload;
    if (s.event == FMT_EVENT_CPU) {
        s.posix_clock = s.a->cfg.cpu_clock == CONFIG_CPU_CLOCK_POSIX;
        scan(&s, recorder_now_ns());
        recorder_info(&s.a->rec, "cpu_clock",
                      s.a->cfg.cpu_clock == CONFIG_CPU_CLOCK_POSIX
                          ? "posix-cpu-timer (--cpu-clock posix; checked at the scheduler tick)"
                      : s.posix_clock ? "posix-cpu-timer (perf_event refused; checked at the scheduler tick)"
                      : s.perf_exclude_kernel ? "perf_event task-clock (user time only)"
                                              : "perf_event task-clock");
    }
    uint64_t period = s.event == FMT_EVENT_WALL ? s.a->cfg.interval_ns : DRAIN_NS;
    uint64_t next = recorder_now_ns();
    while (!atomic_load(&s.a->stopping)) {
        uint64_t now = recorder_now_ns();
        cycle(&s, now);
        recorder_maybe_flush(&s.a->rec, recorder_now_ns());
        next += period;
        now = recorder_now_ns();
        if (next < now)
            next = now + period; /* fell behind: do not try to catch up */
        for (;;) {
            agent_ids_unlock(s.a);
            agent_sleep_until(s.a, next);
            agent_ids_lock(s.a);
            if (atomic_load(&s.a->stopping) || !atomic_exchange(&s.a->poked, 0))
                break;
            /* a new thread: give it its clock now, not at the next cycle,
             * so that even a short-lived thread is sampled */
            add_managed(&s);
        }
    }
    finish(&s);
    s.a->on_unload = NULL;
    s.a->sampler_state = NULL;
    agent_ids_unlock(s.a);
    map64_free(&s.leaf_cache);
    mem_free(s.views);
    mem_free(s.record);
    mem_free(s.frames);
    return NULL;
}
