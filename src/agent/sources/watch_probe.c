/*
 * watch_probe: the code rewritten methods call (see watch.h), on the
 * program's threads, with the thread in preemptive mode (calli of an
 * unmanaged address makes the runtime switch).  It reads the arguments in
 * place and queues them; it never waits, never calls the runtime, and
 * bounds what it takes: past --count, past the rate (calls a second), or
 * with the thread's queue full, a call is counted and not queued (its
 * token is 0, so its exit is not queued either).
 *
 * A reference is read once from the argument's home (a root the runtime
 * keeps alive) and the object's fields right after; a collection that
 * moves the object in between (the thread is preemptive here) may show
 * its old copy's characters.  The stop path clears `active` and waits for
 * the probes running (inflight) before the queues go away.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent/evq.h"
#include "agent/sources/watch.h"
#include "common/clock.h"

struct watch_method watch_methods[WATCH_MAX_METHODS];
struct watch_probe_state watch_probe;

#define MAX_WORDS (3 + (WATCH_ARGS + 1) * (1 + WATCH_STRING_CHARS / 4))

/* Appends one value read from addr; returns the new word count. */
static uint32_t take(const struct watch_value *v, const void *addr, uint64_t *w, uint32_t n)
{
    uint64_t hdr = v->read;
    if (!addr) {
        w[n++] = WATCH_READ_NONE;
        return n;
    }
    switch (v->read) {
    case WATCH_READ_BYTES: {
        uint64_t data[2] = {0, 0};
        memcpy(data, addr, v->size);
        w[n++] = hdr | (uint64_t)v->size << 16;
        w[n++] = data[0];
        if (v->size > 8)
            w[n++] = data[1];
        return n;
    }
    case WATCH_READ_STRING: {
        const char *obj = *(const char *const *)addr;
        if (!obj) {
            w[n++] = hdr | 1u << 8;
            return n;
        }
        int32_t len;
        memcpy(&len, obj + 8, 4);
        uint32_t chars = len < 0 ? 0 : (uint32_t)len;
        if (chars > WATCH_STRING_CHARS)
            chars = WATCH_STRING_CHARS;
        w[n++] = hdr | (uint64_t)chars << 24 | (uint64_t)(uint32_t)len << 32;
        uint32_t words = (chars + 3) / 4;
        memset(&w[n], 0, words * 8);
        memcpy(&w[n], obj + 12, chars * 2);
        return n + words;
    }
    case WATCH_READ_ARRAY:
    case WATCH_READ_REF: {
        const char *obj = *(const char *const *)addr;
        uint32_t len = 0;
        if (obj && v->read == WATCH_READ_ARRAY)
            memcpy(&len, obj + 8, 4);
        w[n++] = hdr | (uint64_t)(obj == NULL) << 8 | (uint64_t)len << 32;
        return n;
    }
    default:
        w[n++] = WATCH_READ_NONE;
        return n;
    }
}

/* May this call be taken (count, rate)? */
static int admit(uint64_t now)
{
    struct watch_probe_state *p = &watch_probe;
    if (p->count_limit && atomic_load_explicit(&p->taken, memory_order_relaxed) >= p->count_limit) {
        atomic_fetch_add_explicit(&p->over_count, 1, memory_order_relaxed);
        return 0;
    }
    uint64_t second = now / 1000000000ull;
    uint64_t window = atomic_load_explicit(&p->window, memory_order_relaxed);
    if (window != second &&
        atomic_compare_exchange_strong(&p->window, &window, second))
        atomic_store_explicit(&p->window_taken, 0, memory_order_relaxed);
    if (atomic_fetch_add_explicit(&p->window_taken, 1, memory_order_relaxed) >= p->rate) {
        atomic_fetch_add_explicit(&p->over_rate, 1, memory_order_relaxed);
        return 0;
    }
    return 1;
}

int64_t watch_enter(int32_t method, void *a0, void *a1, void *a2, void *a3, void *a4, void *a5)
{
    struct watch_probe_state *p = &watch_probe;
    atomic_fetch_add_explicit(&p->inflight, 1, memory_order_acq_rel);
    int64_t token = 0;
    if (!atomic_load_explicit(&p->active, memory_order_acquire) || method < 0 ||
        method >= WATCH_MAX_METHODS)
        goto out;
    /* the rate's second by the coarse clock (a few ns, no vDSO read of
     * the counter); the call's own time by the precise one, when taken */
    if (!admit(clock_ns(CLOCK_MONOTONIC_COARSE)))
        goto out;
    uint64_t now = clock_now_ns();
    const struct watch_method *m = &watch_methods[method];
    void *args[WATCH_ARGS] = {a0, a1, a2, a3, a4, a5};
    uint64_t w[MAX_WORDS];
    uint32_t n = 0;
    w[n++] = (uint64_t)(uint32_t)method | (uint64_t)m->taken << 32;
    w[n++] = now;
    for (uint32_t i = 0; i < m->taken; i++)
        n = take(&m->args[i], args[i], w, n);
    if (evq_push(p->source, WATCH_ENTRY_ENTER, w, n, p->stack_depth) < 0) {
        atomic_fetch_add_explicit(&p->queue_full, 1, memory_order_relaxed);
        goto out;
    }
    atomic_fetch_add_explicit(&p->taken, 1, memory_order_relaxed);
    token = (int64_t)now;
out:
    atomic_fetch_sub_explicit(&p->inflight, 1, memory_order_acq_rel);
    return token;
}

void watch_exit(int32_t method, int64_t token, void *result)
{
    struct watch_probe_state *p = &watch_probe;
    if (!token)
        return; /* its entry was not taken */
    atomic_fetch_add_explicit(&p->inflight, 1, memory_order_acq_rel);
    if (atomic_load_explicit(&p->active, memory_order_acquire) && method >= 0 &&
        method < WATCH_MAX_METHODS) {
        const struct watch_method *m = &watch_methods[method];
        uint64_t w[MAX_WORDS];
        uint32_t n = 0;
        w[n++] = (uint64_t)(uint32_t)method | (uint64_t)1 << 32;
        w[n++] = (uint64_t)token;
        n = take(&m->ret, m->ret.kind == SIG_VOID ? NULL : result, w, n);
        if (evq_push(p->source, WATCH_ENTRY_EXIT, w, n, 0) < 0)
            atomic_fetch_add_explicit(&p->queue_full, 1, memory_order_relaxed);
    }
    atomic_fetch_sub_explicit(&p->inflight, 1, memory_order_acq_rel);
}

void watch_thrown(uint32_t method, uint64_t klass)
{
    struct watch_probe_state *p = &watch_probe;
    atomic_fetch_add_explicit(&p->inflight, 1, memory_order_acq_rel);
    if (atomic_load_explicit(&p->active, memory_order_acquire) && method < WATCH_MAX_METHODS) {
        uint64_t w[2] = {method, klass};
        if (evq_push(p->source, WATCH_ENTRY_THROW, w, 2, 0) < 0)
            atomic_fetch_add_explicit(&p->queue_full, 1, memory_order_relaxed);
    }
    atomic_fetch_sub_explicit(&p->inflight, 1, memory_order_acq_rel);
}

void watch_probe_quiesce(void)
{
    for (int i = 0; i < 20000 && atomic_load(&watch_probe.inflight); i++) {
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
    }
}

/* ---- the loop's side ---------------------------------------------------------------- */

int watch_decode_value(const uint64_t *payload, uint32_t words, uint32_t *pos,
                       struct watch_decoded *out)
{
    memset(out, 0, sizeof *out);
    if (*pos >= words)
        return -1;
    uint64_t hdr = payload[(*pos)++];
    out->read = (uint8_t)hdr;
    out->is_null = (uint8_t)(hdr >> 8) & 1;
    switch (out->read) {
    case WATCH_READ_BYTES: {
        uint32_t size = (uint32_t)(hdr >> 16) & 0xff, need = (size + 7) / 8;
        if (size > 16 || *pos + need > words)
            return -1;
        memcpy(out->bytes, &payload[*pos], size);
        *pos += need;
        return 0;
    }
    case WATCH_READ_STRING: {
        if (out->is_null)
            return 0;
        out->chars = (uint32_t)(hdr >> 24) & 0xff;
        out->length = (uint32_t)(hdr >> 32);
        uint32_t need = (out->chars + 3) / 4;
        if (out->chars > WATCH_STRING_CHARS || *pos + need > words)
            return -1;
        memcpy(out->text, &payload[*pos], out->chars * 2);
        *pos += need;
        return 0;
    }
    case WATCH_READ_ARRAY:
    case WATCH_READ_REF:
        out->length = (uint32_t)(hdr >> 32);
        return 0;
    default:
        return 0;
    }
}

/* A System.Decimal's bits (flags, hi32, lo64) as text, its scale kept. */
static void format_decimal(const uint8_t b[16], char *out, size_t size)
{
    uint32_t flags, hi;
    uint64_t lo;
    memcpy(&flags, b, 4);
    memcpy(&hi, b + 4, 4);
    memcpy(&lo, b + 8, 8);
    unsigned scale = (flags >> 16) & 0xff;
    unsigned __int128 v = (unsigned __int128)hi << 64 | lo;
    char digits[64];
    int n = 0;
    do {
        digits[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v && n < 40);
    while (n <= (int)scale && n < 40)
        digits[n++] = '0';
    char text[80];
    size_t o = 0;
    if (flags & 0x80000000u)
        text[o++] = '-';
    for (int i = n - 1; i >= 0; i--) {
        text[o++] = digits[i];
        if (i == (int)scale && scale)
            text[o++] = '.';
    }
    text[o] = '\0';
    snprintf(out, size, "%s", text);
}

static void format_string(const struct watch_decoded *d, char *out, size_t size)
{
    size_t o = 0;
    if (size < 8)
        return;
    out[o++] = '"';
    for (uint32_t i = 0; i < d->chars && o + 8 < size; i++) {
        uint16_t c = d->text[i];
        if (c == '"' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c >= 0x20 && c < 0x7f) {
            out[o++] = (char)c;
        } else if (c < 0x80) {
            o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
        } else if (c < 0x800) {
            out[o++] = (char)(0xc0 | c >> 6);
            out[o++] = (char)(0x80 | (c & 0x3f));
        } else if (c >= 0xd800 && c <= 0xdfff) {
            out[o++] = '?'; /* half of a pair: not rejoined */
        } else {
            out[o++] = (char)(0xe0 | c >> 12);
            out[o++] = (char)(0x80 | ((c >> 6) & 0x3f));
            out[o++] = (char)(0x80 | (c & 0x3f));
        }
    }
    out[o++] = '"';
    out[o] = '\0';
    if (d->length > d->chars)
        snprintf(out + o, size - o, "...(%u chars)", d->length);
}

void watch_format_value(const struct watch_value *v, const struct watch_decoded *d, char *out,
                        size_t size)
{
    const uint8_t *b = d->bytes;
    switch (d->read) {
    case WATCH_READ_STRING:
        if (d->is_null)
            snprintf(out, size, "null");
        else
            format_string(d, out, size);
        return;
    case WATCH_READ_REF:
        snprintf(out, size, "%s", d->is_null ? "null" : v->type);
        return;
    case WATCH_READ_ARRAY:
        if (d->is_null) {
            snprintf(out, size, "null");
        } else {
            /* "int[]" -> "int[3]" */
            char base[48];
            snprintf(base, sizeof base, "%s", v->type);
            char *br = strstr(base, "[]");
            if (br)
                *br = '\0';
            snprintf(out, size, "%s[%u]", base, d->length);
        }
        return;
    case WATCH_READ_BYTES:
        break;
    default:
        snprintf(out, size, "%s", v->type);
        return;
    }
    if (v->decimal) {
        format_decimal(b, out, size);
        return;
    }
    int8_t i1;
    int16_t i2;
    int32_t i4;
    int64_t i8;
    uint16_t u2;
    uint32_t u4;
    uint64_t u8;
    float r4;
    double r8;
    switch (v->kind) {
    case SIG_BOOL: snprintf(out, size, "%s", b[0] ? "true" : "false"); break;
    case SIG_CHAR:
        memcpy(&u2, b, 2);
        if (u2 >= 0x20 && u2 < 0x7f && u2 != '\'' && u2 != '\\')
            snprintf(out, size, "'%c'", (char)u2);
        else
            snprintf(out, size, "'\\u%04x'", u2);
        break;
    case SIG_I1: memcpy(&i1, b, 1); snprintf(out, size, "%d", i1); break;
    case SIG_U1: snprintf(out, size, "%u", b[0]); break;
    case SIG_I2: memcpy(&i2, b, 2); snprintf(out, size, "%d", i2); break;
    case SIG_U2: memcpy(&u2, b, 2); snprintf(out, size, "%u", u2); break;
    case SIG_I4: memcpy(&i4, b, 4); snprintf(out, size, "%d", i4); break;
    case SIG_U4: memcpy(&u4, b, 4); snprintf(out, size, "%u", u4); break;
    case SIG_I8: case SIG_I: memcpy(&i8, b, 8); snprintf(out, size, "%lld", (long long)i8); break;
    case SIG_U8: case SIG_U: memcpy(&u8, b, 8); snprintf(out, size, "%llu", (unsigned long long)u8); break;
    case SIG_R4: memcpy(&r4, b, 4); snprintf(out, size, "%.9g", (double)r4); break;
    case SIG_R8: memcpy(&r8, b, 8); snprintf(out, size, "%.17g", r8); break;
    case SIG_POINTER: memcpy(&u8, b, 8); snprintf(out, size, "0x%llx", (unsigned long long)u8); break;
    default: snprintf(out, size, "%s", v->type); break;
    }
}
