/*
 * recorder: see recorder.h.
 */
#include "agent/recorder.h"

#include <errno.h>
#include <signal.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/fds.h"
#include "agent/log.h"
#include "common/clock.h"
#include "common/hash.h"
#include "common/mem.h"

/* 512 K frame ids (2 MiB, with the index about 3) of distinct stacks
 * before the table is reset, and 2 MiB of interned strings: the agent stays
 * under 20 MB however long the program runs (docs/performance.md). */
#define DEFAULT_POOL_BUDGET (512u << 10)
#define DEFAULT_STRINGS_BUDGET (2u << 20)
/* What an interned string costs beyond its bytes: its copy's malloc
 * header, its pointer and length, its index slots. */
#define STRING_OVERHEAD 48

/* A write to a pipe whose reader is gone raises SIGPIPE on the writing
 * thread, whose default ends the program: around the agent's writes to a
 * pipe it is blocked, and taken back if the write raised it. */
static ssize_t write_quietly(const struct recorder *r, const void *p, size_t n)
{
    if (!r->pipe)
        return write(r->fd, p, n);
    sigset_t pipe_set, old, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    sigpending(&pending);
    int was_pending = sigismember(&pending, SIGPIPE);
    ssize_t w = write(r->fd, p, n);
    int e = errno;
    if (w < 0 && e == EPIPE && !was_pending) {
        struct timespec zero = {0, 0};
        sigtimedwait(&pipe_set, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return w;
}

static int file_write(void *ctx, const void *data, size_t n)
{
    struct recorder *r = ctx;
    if (r->file_size + n > r->size_limit) {
        errno = EFBIG;
        return -1;
    }
    const char *p = data;
    atomic_store(&r->write_since_ns, clock_now_ns());
    while (n) {
        ssize_t w = write_quietly(r, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            atomic_store(&r->write_since_ns, 0);
            return -1;
        }
        p += w;
        n -= (size_t)w;
        r->file_size += (uint64_t)w;
    }
    atomic_store(&r->write_since_ns, 0);
    return 0;
}

/* Logs a writer failure once and counts it. */
static void check_failed(struct recorder *r)
{
    if (!r->w.error || r->failed_logged)
        return;
    r->failed_logged = 1;
    r->counters[FMT_COUNTER_WRITE_ERRORS]++;
    log_error("cannot write %s: %s; the recording stops here (the program goes on)", r->path,
              strerror(r->w.error));
}

void recorder_command_line(char *out, size_t size)
{
    out[0] = '\0';
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out, size - 1);
    close(fd);
    if (n <= 0)
        return;
    for (ssize_t i = 0; i < n; i++)
        if (out[i] == '\0')
            out[i] = ' ';
    while (n > 0 && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
}

int recorder_open(struct recorder *r, const struct config *c, const char *path, char *err,
                  size_t err_size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, err_size, "cannot open %s: %s", path,
                 errno == ELOOP ? "it is a symbolic link" : strerror(errno));
        return -1;
    }
    return recorder_open_fd(r, c, fd, path, err, err_size);
}

int recorder_open_fd(struct recorder *r, const struct config *c, int fd, const char *path,
                     char *err, size_t err_size)
{
    memset(r, 0, sizeof *r);
    r->fd = -1;
    snprintf(r->path, sizeof r->path, "%s", path);
    r->pool_budget = DEFAULT_POOL_BUDGET;
    r->strings_budget = DEFAULT_STRINGS_BUDGET;
    r->size_limit = UINT64_MAX;
    struct rlimit lim;
    if (getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
        r->size_limit = (uint64_t)lim.rlim_cur;
    map64_init(&r->stack_index);
    if (strtab_init(&r->strings) < 0 || strtab_init(&r->synthetic) < 0) {
        snprintf(err, err_size, "out of memory");
        strtab_free(&r->strings);
        close(fd);
        return -1;
    }
    r->fd = fd; /* moved high by the loop's thread (recorder_move_high) */
    struct stat st;
    r->pipe = fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
    struct writer_sink sink = {file_write, r};
    r->start_ns = r->last_flush_ns = clock_now_ns();
    r->open = 1;
    if (writer_begin(&r->w, sink) < 0) {
        snprintf(err, err_size, "cannot write %s: %s", path, strerror(r->w.error));
        recorder_close(r);
        return -1;
    }
    char text[4096];
    r->next_event = FMT_EVENT_FIRST_RECORDED;
    writer_info(&r->w, FMT_INFO_AGENT_VERSION, CORSCOPE_VERSION);
    snprintf(text, sizeof text, "%ld", (long)getpid());
    writer_info(&r->w, FMT_INFO_PID, text);
    recorder_command_line(text, sizeof text);
    writer_info(&r->w, FMT_INFO_COMMAND, text);
    config_value_text(c, "event", text, sizeof text);
    writer_info(&r->w, FMT_INFO_EVENTS, text);
    writer_info(&r->w, FMT_INFO_SAMPLER, config_sampler_name(c->sampler));
    snprintf(text, sizeof text, "%llu", (unsigned long long)c->interval_ns);
    writer_info(&r->w, FMT_INFO_INTERVAL_NS, text);
    snprintf(text, sizeof text, "%u", c->max_depth);
    writer_info(&r->w, FMT_INFO_MAX_DEPTH, text);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    snprintf(text, sizeof text, "%llu",
             (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec);
    writer_info(&r->w, FMT_INFO_START_REALTIME_NS, text);
    snprintf(text, sizeof text, "%llu", (unsigned long long)r->start_ns);
    writer_info(&r->w, FMT_INFO_START_MONOTONIC_NS, text);
    recorder_flush(r);
    if (r->w.error) {
        snprintf(err, err_size, "cannot write %s: %s", path, strerror(r->w.error));
        recorder_close(r);
        return -1;
    }
    return 0;
}

void recorder_move_high(struct recorder *r)
{
    if (r->fd >= 0)
        r->fd = fds_move_high(r->fd);
}

void recorder_info(struct recorder *r, const char *key, const char *value)
{
    writer_info(&r->w, key, value);
    check_failed(r);
}

void recorder_sampled_event(struct recorder *r, uint32_t id, const char *name, const char *unit,
                            uint64_t period)
{
    writer_event(&r->w, id, name, unit, period);
    check_failed(r);
}

uint32_t recorder_define(struct recorder *r, struct writer_event_def *d)
{
    if (r->w.error)
        return 0;
    d->id = r->next_event++;
    writer_event_def(&r->w, d);
    check_failed(r);
    return r->w.error ? 0 : d->id;
}

uint32_t recorder_define_event(struct recorder *r, enum fmt_ev ev)
{
    struct writer_event_def d;
    schema_event_def(&d, ev);
    return recorder_define(r, &d);
}

uint64_t recorder_since_start(const struct recorder *r, uint64_t now_ns)
{
    return now_ns > r->start_ns ? now_ns - r->start_ns : 0;
}

void recorder_record(struct recorder *r, uint32_t event, uint32_t thread, uint64_t now_ns,
                     uint32_t stack, const uint64_t *values, uint32_t value_count,
                     const uint64_t *fields, uint32_t field_count)
{
    if (!event)
        return;
    writer_record(&r->w, event, thread, recorder_since_start(r, now_ns), stack, values,
                  value_count, fields, field_count);
    r->counters[FMT_COUNTER_EVENTS]++;
    check_failed(r);
}

uint32_t recorder_label(struct recorder *r, const char *label, const char *subject,
                        uint32_t subject_frame)
{
    uint32_t l = recorder_string(r, label, strlen(label));
    uint32_t s = subject ? recorder_string(r, subject, strlen(subject)) : 0;
    uint32_t id = writer_frame(&r->w, FMT_FRAME_LABEL, 0, s, l, subject_frame);
    check_failed(r);
    return id;
}

int recorder_failed(const struct recorder *r)
{
    return r->w.error != 0;
}

static void reset_strings(struct recorder *r)
{
    struct strtab fresh;
    if (strtab_init(&fresh) < 0)
        return; /* keep the old one: memory says no either way */
    strtab_free(&r->strings);
    r->strings = fresh;
    r->strings_bytes = 0;
    r->counters[FMT_COUNTER_STRING_RESETS]++;
}

uint32_t recorder_string(struct recorder *r, const char *s, size_t len)
{
    if (!len)
        return 0;
    uint32_t at = strtab_find(&r->strings, s, len);
    if (at != UINT32_MAX)
        return r->string_id[at];
    if (r->strings_bytes + len + STRING_OVERHEAD > r->strings_budget)
        reset_strings(r);
    int is_new;
    at = strtab_intern(&r->strings, s, len, &is_new);
    if (at == UINT32_MAX)
        return 0;
    /* the grown table is ours at once, whatever the write does (the old
     * block is gone: keeping its address made recorder_close free it
     * twice after a write error) */
    uint32_t *ids = mem_grow(r->string_id, &r->string_id_cap, (size_t)at + 1, sizeof *ids);
    if (ids)
        r->string_id = ids;
    uint32_t written = writer_string(&r->w, s, len);
    check_failed(r);
    if (!ids || !written) {
        /* not remembered: a later use writes it again */
        reset_strings(r);
        return written;
    }
    r->string_id[at] = written;
    r->strings_bytes += len + STRING_OVERHEAD;
    return written;
}

uint32_t recorder_frame(struct recorder *r, enum fmt_frame_kind kind, const char *module,
                        const char *type, const char *name, uint64_t extra)
{
    uint32_t m = module ? recorder_string(r, module, strlen(module)) : 0;
    uint32_t t = type ? recorder_string(r, type, strlen(type)) : 0;
    uint32_t n = name ? recorder_string(r, name, strlen(name)) : 0;
    uint32_t id = writer_frame(&r->w, kind, m, t, n, extra);
    check_failed(r);
    return id;
}

uint32_t recorder_synthetic(struct recorder *r, const char *name)
{
    int is_new;
    size_t len = strlen(name);
    uint32_t at = strtab_intern(&r->synthetic, name, len, &is_new);
    if (at == UINT32_MAX)
        return 0;
    if (is_new) {
        uint32_t *grown = mem_grow(r->synthetic_frame, &r->synthetic_cap, at + 1,
                                   sizeof *r->synthetic_frame);
        if (!grown)
            return 0;
        r->synthetic_frame = grown;
        r->synthetic_frame[at] = recorder_frame(r, FMT_FRAME_SYNTHETIC, NULL, NULL, name, 0);
    }
    return r->synthetic_frame[at];
}

static void reset_stacks(struct recorder *r)
{
    map64_clear(&r->stack_index);
    r->pool_len = 0;
    r->stacks = 0;
    r->counters[FMT_COUNTER_STACK_RESETS]++;
}

uint32_t recorder_stack(struct recorder *r, const uint32_t *frames, uint32_t depth)
{
    uint64_t key = hash_bytes(frames, depth * sizeof *frames, 0x57ac);
    for (;; key++) {
        uint32_t at;
        if (!map64_get(&r->stack_index, key, &at))
            break;
        if (r->stack_len[at] == depth &&
            memcmp(r->stack_pool + r->stack_off[at], frames, depth * sizeof *frames) == 0)
            return r->stack_id[at];
    }
    uint32_t id = writer_stack(&r->w, frames, depth);
    check_failed(r);
    if (!id)
        return 0;
    /* remember it; if memory says no, the stack is simply written again
     * next time */
    if (r->pool_len + depth > r->pool_budget)
        reset_stacks(r);
    uint32_t *pool = mem_grow(r->stack_pool, &r->pool_cap, r->pool_len + depth, sizeof *pool);
    if (!pool)
        return id;
    r->stack_pool = pool;
    size_t cap = r->stacks_cap;
    uint32_t *off = mem_grow(r->stack_off, &cap, r->stacks + 1, sizeof *off);
    if (!off)
        return id;
    r->stack_off = off;
    cap = r->stacks_cap;
    uint32_t *len = mem_grow(r->stack_len, &cap, r->stacks + 1, sizeof *len);
    if (!len)
        return id;
    r->stack_len = len;
    cap = r->stacks_cap;
    uint32_t *ids = mem_grow(r->stack_id, &cap, r->stacks + 1, sizeof *ids);
    if (!ids)
        return id;
    r->stack_id = ids;
    r->stacks_cap = cap;
    if (map64_put(&r->stack_index, key, (uint32_t)r->stacks) < 0)
        return id;
    memcpy(r->stack_pool + r->pool_len, frames, depth * sizeof *frames);
    r->stack_off[r->stacks] = (uint32_t)r->pool_len;
    r->stack_len[r->stacks] = depth;
    r->stack_id[r->stacks] = id;
    r->stacks++;
    r->pool_len += depth;
    return id;
}

void recorder_thread(struct recorder *r, uint32_t id, uint64_t os_tid, const char *name)
{
    uint32_t sid = name ? recorder_string(r, name, strlen(name)) : 0;
    writer_thread(&r->w, id, os_tid, sid);
    check_failed(r);
}

void recorder_sample(struct recorder *r, uint32_t event, uint32_t thread, uint64_t now_ns,
                     uint32_t stack, uint64_t weight)
{
    if (!stack)
        return;
    writer_sample(&r->w, event, thread, recorder_since_start(r, now_ns), stack, weight);
    r->counters[FMT_COUNTER_SAMPLES]++;
    check_failed(r);
}

void recorder_count(struct recorder *r, enum fmt_counter c, uint64_t n)
{
    r->counters[c] += n;
}

void recorder_max(struct recorder *r, enum fmt_counter c, uint64_t v)
{
    if (v > r->counters[c])
        r->counters[c] = v;
}

void recorder_uncounted(struct recorder *r, enum fmt_counter c)
{
    r->uncounted[c] = 1;
}

void recorder_flush(struct recorder *r)
{
    if (!r->open)
        return;
    recorder_max(r, FMT_COUNTER_MAX_AGENT_HEAP, mem_live_bytes());
    r->counters[FMT_COUNTER_RECORDED_NS] = recorder_since_start(r, clock_now_ns());
    for (int i = 0; i < FMT_COUNTER_COUNT; i++)
        if (r->counters[i])
            writer_stat(&r->w, schema_counter_key(i), r->counters[i]);
    writer_flush(&r->w);
    check_failed(r);
    r->last_flush_ns = clock_now_ns();
}

void recorder_hold(struct recorder *r)
{
    r->w.hold++;
}

void recorder_release(struct recorder *r)
{
    if (r->w.hold > 0)
        r->w.hold--;
}

void recorder_maybe_flush(struct recorder *r, uint64_t now_ns)
{
    if (!r->w.hold && now_ns - r->last_flush_ns >= RECORDER_FLUSH_NS)
        recorder_flush(r);
}

void recorder_close(struct recorder *r)
{
    if (!r->open)
        return;
    r->open = 0;
    if (!r->w.error) {
        const char *keys[FMT_COUNTER_COUNT];
        uint64_t values[FMT_COUNTER_COUNT];
        size_t n = 0;
        for (int i = 0; i < FMT_COUNTER_COUNT; i++) {
            if (r->uncounted[i])
                continue;
            keys[n] = schema_counter_key(i);
            values[n++] = r->counters[i];
        }
        writer_finish(&r->w, keys, values, n);
        check_failed(r);
    }
    writer_free(&r->w);
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
    strtab_free(&r->strings);
    strtab_free(&r->synthetic);
    map64_free(&r->stack_index);
    mem_free(r->synthetic_frame);
    mem_free(r->string_id);
    r->string_id = NULL;
    mem_free(r->stack_pool);
    mem_free(r->stack_off);
    mem_free(r->stack_len);
    mem_free(r->stack_id);
    r->synthetic_frame = r->stack_pool = r->stack_off = r->stack_len = r->stack_id = NULL;
}
