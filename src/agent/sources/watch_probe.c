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

#include "agent/agent_thread.h"
#include "agent/evq.h"
#include "agent/sources/watch.h"
#include "common/clock.h"

struct watch_method watch_methods[WATCH_MAX_METHODS];
struct watch_probe_state watch_probe;
_Atomic uint32_t watch_type_handle_offset;
_Atomic uint64_t watch_string_mt;

#define STRINGS_WORDS (1 + WATCH_ARRAY_STRINGS * (1 + WATCH_ELEMENT_CHARS / 4))
#define OBJECT_WORDS (2 + WATCH_FIELD_BYTES / 8 + WATCH_FIELD_STRINGS * (1 + WATCH_ELEMENT_CHARS / 4))
#define VALUE_WORDS_MAX (STRINGS_WORDS > OBJECT_WORDS ? STRINGS_WORDS : OBJECT_WORDS)
_Static_assert(WATCH_FIELD_BYTES >= WATCH_ARRAY_BYTES && WATCH_FIELD_BYTES % 8 == 0 &&
               WATCH_FIELD_BYTES < 256, "a value's bytes fit its header and buffer");
_Static_assert(WATCH_FIELD_STRINGS <= WATCH_ARRAY_STRINGS, "an object's strings fit a decoded value");
#define MAX_WORDS (2 + WATCH_ARGS * VALUE_WORDS_MAX)
_Static_assert(VALUE_WORDS_MAX >= 1 + WATCH_STRING_CHARS / 4, "a string fits a value's words");
_Static_assert(VALUE_WORDS_MAX >= 2 + WATCH_ARRAY_BYTES / 8, "an array fits a value's words");

/* MethodTable::m_dwFlags (its first word): an array's or string's
 * element size is its low 16 bits when enum_flag_HasComponentSize. */
#define MT_HAS_COMPONENT_SIZE 0x80000000u

/* Appends a string (obj: a System.String or NULL), at most max_chars of
 * it, under header bits `read`; returns the new word count. */
uint32_t watch_take_string(const char *obj, uint32_t max_chars, uint64_t read, uint64_t *w,
                           uint32_t n)
{
    if (!obj) {
        w[n++] = read | 1u << 8;
        return n;
    }
    int32_t len;
    memcpy(&len, obj + 8, 4);
    uint32_t chars = len < 0 ? 0 : (uint32_t)len;
    if (chars > max_chars)
        chars = max_chars;
    w[n++] = read | (uint64_t)chars << 24 | (uint64_t)(uint32_t)len << 32;
    uint32_t words = (chars + 3) / 4;
    memset(&w[n], 0, words * 8);
    memcpy(&w[n], obj + 12, chars * 2);
    return n + words;
}

/* MethodTable::m_dwFlags' category bits: a value type (primitive, enum,
 * struct, Nullable) is 0x4..0x7 under 0xF0000. */
#define MT_CATEGORY_MASK 0x000F0000u
#define MT_CATEGORY_VALUETYPE 0x00040000u

/* A value of a type parameter at addr, its instantiation from the
 * RuntimeTypeHandle at handle (the method's ldtoken): the RuntimeType's
 * type handle (at the field offset the runtime's layout gave), then as a
 * value type its first bytes (at most 16, never past its size), as a
 * string its text, as another reference its null-ness and MethodTable. */
static uint32_t take_generic(const void *addr, const void *handle, int byref, uint64_t hdr,
                             uint64_t *w, uint32_t n)
{
    uint32_t at = atomic_load_explicit(&watch_type_handle_offset, memory_order_relaxed);
    const char *rt = handle ? *(const char *const *)handle : NULL;
    uint64_t th = 0;
    if (rt && at)
        memcpy(&th, rt + at, 8);
    if (!th || (th & 2)) { /* not known, or not a MethodTable (a TypeDesc) */
        w[n++] = hdr | (uint64_t)WATCH_GENERIC_UNKNOWN << 24;
        return n;
    }
    uint32_t flags, base;
    memcpy(&flags, (const char *)th, 4);
    memcpy(&base, (const char *)th + 4, 4);
    if ((flags & MT_CATEGORY_MASK) >= MT_CATEGORY_VALUETYPE &&
        (flags & MT_CATEGORY_MASK) <= MT_CATEGORY_VALUETYPE + 0x30000u) {
        /* a boxed value's base size: header, MethodTable, the value (padded) */
        uint32_t bytes = base > 16 ? base - 16 : 0;
        if (bytes > 16)
            bytes = 16;
        /* the base size is padded: past a value's end is still its home's
         * stack slot for an argument or local, but a `ref T` may point at
         * the last element of an array: not read (shown by its type) */
        if (byref)
            bytes = 0;
        w[n++] = hdr | (uint64_t)bytes << 16 | (uint64_t)WATCH_GENERIC_VALUE << 24;
        w[n++] = th;
        uint64_t data[2] = {0, 0};
        memcpy(data, addr, bytes);
        w[n++] = data[0];
        w[n++] = data[1];
        return n;
    }
    const char *obj = *(const char *const *)addr;
    uint64_t mt = 0;
    if (obj)
        memcpy(&mt, obj, 8);
    mt &= ~(uint64_t)7;
    if (obj && mt == atomic_load_explicit(&watch_string_mt, memory_order_relaxed)) {
        w[n++] = hdr | (uint64_t)WATCH_GENERIC_STRING << 24;
        w[n++] = th;
        return watch_take_string(obj, WATCH_STRING_CHARS, WATCH_READ_STRING, w, n);
    }
    w[n++] = hdr | (uint64_t)(obj == NULL) << 8 | (uint64_t)WATCH_GENERIC_REF << 24;
    w[n++] = th;
    w[n++] = mt;
    return n;
}

/* Appends one value read from addr (the argument's home); returns the
 * new word count (at most VALUE_WORDS_MAX more).  References are read in
 * cooperative mode (see watch_il.c), from a home the runtime keeps.
 * handle: a value of T's RuntimeTypeHandle local (NULL: none). */
static uint32_t take(const struct watch_value *v, const void *addr, const void *handle, uint64_t *w,
                     uint32_t n)
{
    uint64_t hdr = v->read;
    if (addr && v->byref && v->read != WATCH_READ_OUT)
        addr = *(const void *const *)addr; /* ref / in: the value it points to */
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
    case WATCH_READ_STRING:
        return watch_take_string(*(const char *const *)addr, WATCH_STRING_CHARS, hdr, w, n);
    case WATCH_READ_REF: {
        const char *obj = *(const char *const *)addr;
        w[n++] = hdr | (uint64_t)(obj == NULL) << 8;
        if (obj)
            memcpy(&w[n++], obj, 8);
        return n;
    }
    case WATCH_READ_ARRAY: {
        const char *obj = *(const char *const *)addr;
        if (!obj) {
            w[n++] = hdr | 1u << 8;
            return n;
        }
        uint32_t len;
        uint64_t mt;
        memcpy(&len, obj + 8, 4);
        memcpy(&mt, obj, 8);
        uint32_t elem = 0;
        static const uint8_t sizes[] = {
            [SIG_BOOL] = 1, [SIG_I1] = 1, [SIG_U1] = 1, [SIG_CHAR] = 2, [SIG_I2] = 2,
            [SIG_U2] = 2, [SIG_I4] = 4, [SIG_U4] = 4, [SIG_R4] = 4, [SIG_I8] = 8,
            [SIG_U8] = 8, [SIG_R8] = 8, [SIG_I] = 8, [SIG_U] = 8,
        };
        if (v->elem_kind && v->elem_kind < sizeof sizes) {
            elem = sizes[v->elem_kind];
        } else if (mt) {
            uint32_t flags;
            memcpy(&flags, (const void *)mt, 4);
            elem = flags & MT_HAS_COMPONENT_SIZE ? flags & 0xffff : 0;
        }
        uint64_t bytes = (uint64_t)len * elem;
        if (bytes > WATCH_ARRAY_BYTES)
            bytes = WATCH_ARRAY_BYTES;
        w[n++] = hdr | bytes << 16 | (uint64_t)len << 32;
        w[n++] = mt;
        uint32_t words = (uint32_t)(bytes + 7) / 8;
        memset(&w[n], 0, words * 8);
        memcpy(&w[n], obj + 16, bytes); /* SZ array: elements after length and padding */
        return n + words;
    }
    case WATCH_READ_STRINGS: {
        const char *obj = *(const char *const *)addr;
        if (!obj) {
            w[n++] = hdr | 1u << 8;
            return n;
        }
        uint32_t len;
        memcpy(&len, obj + 8, 4);
        uint32_t taken = len < WATCH_ARRAY_STRINGS ? len : WATCH_ARRAY_STRINGS;
        w[n++] = hdr | (uint64_t)taken << 16 | (uint64_t)len << 32;
        for (uint32_t i = 0; i < taken; i++) {
            const char *s;
            memcpy(&s, obj + 16 + 8 * i, 8);
            n = watch_take_string(s, WATCH_ELEMENT_CHARS, WATCH_READ_STRING, w, n);
        }
        return n;
    }
    case WATCH_READ_OBJECT: {
        const char *obj = *(const char *const *)addr;
        if (!obj) {
            w[n++] = hdr | 1u << 8;
            return n;
        }
        uint64_t mt;
        memcpy(&mt, obj, 8);
        mt &= ~(uint64_t)7;
        /* MethodTable: m_dwFlags, then m_BaseSize (header and MethodTable
         * pointer included): the object's fields are the rest; a string's
         * or an array's (a component size) are not fields */
        uint32_t flags, base, bytes = 0;
        memcpy(&flags, (const char *)mt, 4);
        memcpy(&base, (const char *)mt + 4, 4);
        if (!(flags & MT_HAS_COMPONENT_SIZE) && base > 16)
            bytes = base - 16 < WATCH_FIELD_BYTES ? base - 16 : WATCH_FIELD_BYTES;
        const struct watch_layout *l = watch_layout_find(mt);
        uint32_t strings = 0;
        if (l)
            for (uint32_t i = 0; i < l->strings && i < WATCH_FIELD_STRINGS; i++)
                strings += l->string_at[i] >= 8 && l->string_at[i] + 16u <= base;
        if (strings != (l ? l->strings : 0))
            strings = 0, l = NULL; /* a layout that does not fit the object: none */
        w[n++] = hdr | (uint64_t)bytes << 16 | (uint64_t)strings << 24 | (uint64_t)(l != NULL) << 32;
        w[n++] = mt;
        uint32_t words = (bytes + 7) / 8;
        memset(&w[n], 0, words * 8);
        memcpy(&w[n], obj + 8, bytes);
        n += words;
        for (uint32_t i = 0; i < strings; i++) {
            const char *str;
            memcpy(&str, obj + l->string_at[i], 8);
            n = watch_take_string(str, WATCH_ELEMENT_CHARS, WATCH_READ_STRING, w, n);
        }
        return n;
    }
    case WATCH_READ_STRUCT: {
        uint32_t bytes = v->size <= WATCH_FIELD_BYTES ? v->size : WATCH_FIELD_BYTES;
        w[n++] = hdr | (uint64_t)bytes << 16;
        uint32_t words = (bytes + 7) / 8;
        memset(&w[n], 0, words * 8);
        memcpy(&w[n], addr, bytes);
        return n + words;
    }
    case WATCH_READ_GENERIC:
        return take_generic(addr, handle, v->byref, hdr, w, n);
    case WATCH_READ_OUT:
        w[n++] = hdr;
        return n;
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
    const struct watch_method *m = &watch_methods[method];
    void *homes[WATCH_ARGS] = {a0, a1, a2, a3, a4, a5};
    void **args = homes + (m->has_this ? 1 : 0); /* after `this`'s */
    /* --where on an argument: before the call takes any place */
    if (m->filter.on && m->filter.arg < m->taken &&
        !watch_filter_keeps(&m->filter, &m->args[m->filter.arg], args[m->filter.arg])) {
        atomic_fetch_add_explicit(&p->filtered, 1, memory_order_relaxed);
        goto out;
    }
    /* the rate's second by the coarse clock (a few ns, no vDSO read of
     * the counter); the call's own time by the precise one, when taken */
    if (!admit(clock_ns(CLOCK_MONOTONIC_COARSE)))
        goto out;
    uint64_t now = clock_now_ns();
    uint64_t w[MAX_WORDS];
    uint32_t n = 0;
    w[n++] = (uint64_t)(uint32_t)method | (uint64_t)(m->taken + (m->has_this ? 1 : 0)) << 32;
    w[n++] = now;
    if (m->has_this)
        n = take(&m->self, homes[0], NULL, w, n);
    void **handles = args + m->taken; /* the slots after the values' */
    for (uint32_t i = 0; i < m->taken; i++)
        n = take(&m->args[i], args[i], m->args[i].handle ? handles[m->args[i].handle - 1] : NULL,
                 w, n);
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

void watch_exit(int32_t method, int64_t token, void *result, void *handle)
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
        uint32_t kind = WATCH_ENTRY_EXIT;
        w[n++] = (uint64_t)(uint32_t)method | (uint64_t)1 << 32;
        w[n++] = (uint64_t)token;
        if (m->filter.on && m->filter.arg == WATCH_FILTER_RESULT &&
            !watch_filter_keeps(&m->filter, &m->ret, result)) {
            kind = WATCH_ENTRY_DROP; /* its entry is waiting: the loop forgets it */
            atomic_fetch_add_explicit(&p->filtered, 1, memory_order_relaxed);
        } else {
            n = take(&m->ret, m->ret.kind == SIG_VOID ? NULL : result, handle, w, n);
        }
        if (evq_push(p->source, kind, w, n, 0) < 0)
            atomic_fetch_add_explicit(&p->queue_full, 1, memory_order_relaxed);
    }
    atomic_fetch_sub_explicit(&p->inflight, 1, memory_order_acq_rel);
}

/* The message of the exception this thread threw last, encoded as a
 * string value (watch_note_thrown), is kept in the thread's agent_thread
 * block (both are called from the runtime's exception callbacks). */
_Static_assert(AGENT_WATCH_MESSAGE_WORDS == 1 + WATCH_STRING_CHARS / 4,
               "a thrown message fits the thread's block");

void watch_note_thrown(const char *message, int known)
{
    struct agent_thread *t = agent_thread_get();
    if (t)
        t->watch.message_words = known ? watch_take_string(message, WATCH_STRING_CHARS,
                                                           WATCH_READ_STRING, t->watch.message, 0)
                                       : 0;
}

void watch_thrown(uint32_t method, uint64_t klass)
{
    struct watch_probe_state *p = &watch_probe;
    atomic_fetch_add_explicit(&p->inflight, 1, memory_order_acq_rel);
    if (atomic_load_explicit(&p->active, memory_order_acquire) && method < WATCH_MAX_METHODS) {
        uint64_t w[2 + AGENT_WATCH_MESSAGE_WORDS] = {method, klass};
        uint32_t n = 2;
        struct agent_thread *t = agent_thread_get();
        if (t && t->watch.message_words && t->watch.message_words <= AGENT_WATCH_MESSAGE_WORDS) {
            memcpy(&w[n], t->watch.message, t->watch.message_words * 8);
            n += t->watch.message_words;
        }
        if (evq_push(p->source, WATCH_ENTRY_THROW, w, n, 0) < 0)
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

/* A string value's header at hdr and its characters at *pos. */
static int decode_string(uint64_t hdr, const uint64_t *payload, uint32_t words, uint32_t *pos,
                         uint32_t max_chars, uint32_t *length, uint32_t *chars, uint16_t *text)
{
    *chars = 0;
    *length = 0;
    if ((hdr >> 8) & 1)
        return 0;
    *chars = (uint32_t)(hdr >> 24) & 0xff;
    *length = (uint32_t)(hdr >> 32);
    uint32_t need = (*chars + 3) / 4;
    if (*chars > max_chars || *chars > *length || need > words - *pos)
        return -1;
    memcpy(text, &payload[*pos], *chars * 2);
    *pos += need;
    return 0;
}

/* out->strings string values at *pos (a string[]'s first elements, an
 * object's string fields), each of at most WATCH_ELEMENT_CHARS. */
static int decode_strings(const uint64_t *payload, uint32_t words, uint32_t *pos,
                          struct watch_decoded *out)
{
    for (uint32_t i = 0; i < out->strings; i++) {
        if (*pos >= words)
            return -1;
        uint64_t sub = payload[(*pos)++];
        if ((uint8_t)sub != WATCH_READ_STRING)
            return -1;
        if ((sub >> 8) & 1)
            out->string_len[i] = UINT32_MAX; /* null */
        else if (decode_string(sub, payload, words, pos, WATCH_ELEMENT_CHARS, &out->string_len[i],
                               &out->string_chars[i], out->string_text[i]) < 0)
            return -1;
    }
    return 0;
}

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
        if (size > 16 || need > words - *pos)
            return -1;
        memcpy(out->bytes, &payload[*pos], size);
        out->nbytes = size;
        *pos += need;
        return 0;
    }
    case WATCH_READ_STRING:
        return decode_string(hdr, payload, words, pos, WATCH_STRING_CHARS, &out->length,
                             &out->chars, out->text);
    case WATCH_READ_REF:
        if (!out->is_null) {
            if (*pos >= words)
                return -1;
            out->mt = payload[(*pos)++];
        }
        return 0;
    case WATCH_READ_ARRAY: {
        if (out->is_null)
            return 0;
        out->length = (uint32_t)(hdr >> 32);
        out->nbytes = (uint32_t)(hdr >> 16) & 0xff;
        uint32_t need = (out->nbytes + 7) / 8;
        if (out->nbytes > WATCH_ARRAY_BYTES || 1 + need > words - *pos)
            return -1;
        out->mt = payload[(*pos)++];
        memcpy(out->bytes, &payload[*pos], out->nbytes);
        *pos += need;
        return 0;
    }
    case WATCH_READ_STRINGS: {
        if (out->is_null)
            return 0;
        out->length = (uint32_t)(hdr >> 32);
        out->strings = (uint32_t)(hdr >> 16) & 0xff;
        if (out->strings > WATCH_ARRAY_STRINGS || out->strings > out->length)
            return -1;
        return decode_strings(payload, words, pos, out);
    }
    case WATCH_READ_OBJECT: {
        if (out->is_null)
            return 0;
        out->nbytes = (uint32_t)(hdr >> 16) & 0xff;
        out->strings = (uint32_t)(hdr >> 24) & 0xff;
        out->layout_known = (uint8_t)(hdr >> 32) & 1;
        uint32_t need = (out->nbytes + 7) / 8;
        if (out->nbytes > WATCH_FIELD_BYTES || out->strings > WATCH_FIELD_STRINGS ||
            1 + need > words - *pos)
            return -1;
        out->mt = payload[(*pos)++];
        memcpy(out->bytes, &payload[*pos], out->nbytes);
        *pos += need;
        return decode_strings(payload, words, pos, out);
    }
    case WATCH_READ_GENERIC: {
        out->generic_kind = (uint8_t)(hdr >> 24);
        if (out->generic_kind == WATCH_GENERIC_UNKNOWN)
            return 0;
        if (out->generic_kind > WATCH_GENERIC_STRING || *pos >= words)
            return -1;
        out->handle = payload[(*pos)++];
        if (out->generic_kind == WATCH_GENERIC_VALUE) {
            out->nbytes = (uint32_t)(hdr >> 16) & 0xff;
            if (out->nbytes > 16 || 2 > words - *pos)
                return -1;
            memcpy(out->bytes, &payload[*pos], 16);
            *pos += 2;
            return 0;
        }
        if (out->generic_kind == WATCH_GENERIC_REF) {
            if (*pos >= words)
                return -1;
            out->mt = payload[(*pos)++];
            return 0;
        }
        if (*pos >= words)
            return -1;
        uint64_t sub = payload[(*pos)++];
        if ((uint8_t)sub != WATCH_READ_STRING)
            return -1;
        out->is_null = (uint8_t)(sub >> 8) & 1;
        return decode_string(sub, payload, words, pos, WATCH_STRING_CHARS, &out->length,
                             &out->chars, out->text);
    }
    case WATCH_READ_STRUCT: {
        out->nbytes = (uint32_t)(hdr >> 16) & 0xff;
        uint32_t need = (out->nbytes + 7) / 8;
        if (out->nbytes > WATCH_FIELD_BYTES || need > words - *pos)
            return -1;
        memcpy(out->bytes, &payload[*pos], out->nbytes);
        *pos += need;
        return 0;
    }
    case WATCH_READ_NONE:
    case WATCH_READ_OUT:
        return 0;
    default:
        return -1;
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

static void format_string(const uint16_t *text, uint32_t chars, uint32_t length, char *out,
                          size_t size)
{
    size_t o = 0;
    if (size < 8) {
        if (size)
            out[0] = '\0';
        return;
    }
    out[o++] = '"';
    for (uint32_t i = 0; i < chars && o + 8 < size; i++) {
        uint16_t c = text[i];
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
    if (length > chars)
        snprintf(out + o, size - o, "...(%u chars)", length);
}

void watch_format_string(const struct watch_decoded *d, char *out, size_t size)
{
    if (d->is_null)
        snprintf(out, size, "null");
    else
        format_string(d->text, d->chars, d->length, out, size);
}

/* A primitive of sig kind `kind` at b. */
static void format_primitive(uint8_t kind, const uint8_t *b, char *out, size_t size)
{
    int8_t i1;
    int16_t i2;
    int32_t i4;
    int64_t i8;
    uint16_t u2;
    uint32_t u4;
    uint64_t u8;
    float r4;
    double r8;
    switch (kind) {
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
    default: snprintf(out, size, "?"); break;
    }
}

static const uint8_t element_sizes[] = {
    [SIG_BOOL] = 1, [SIG_I1] = 1, [SIG_U1] = 1, [SIG_CHAR] = 2, [SIG_I2] = 2, [SIG_U2] = 2,
    [SIG_I4] = 4, [SIG_U4] = 4, [SIG_R4] = 4, [SIG_I8] = 8, [SIG_U8] = 8, [SIG_R8] = 8,
    [SIG_I] = 8, [SIG_U] = 8,
};

/* "int[3] {1, 2, 3}", "string[5] {"a", null, "c", ...}", "Order[2]". */
static void format_array(const struct watch_value *v, const struct watch_decoded *d, char *out,
                         size_t size)
{
    uint8_t kind = v->elem_kind ? v->elem_kind : d->runtime_elem;
    char base[100];
    const char *kw = watch_keyword(kind);
    if (d->read == WATCH_READ_STRINGS)
        snprintf(base, sizeof base, "string");
    else if (kind && kw)
        snprintf(base, sizeof base, "%s", kw);
    else if (d->runtime_type[0])
        snprintf(base, sizeof base, "%s", d->runtime_type);
    else
        snprintf(base, sizeof base, "%s", v->type);
    char *br = strstr(base, "[]");
    if (br)
        *br = '\0';
    if (!strcmp(base, "String"))
        snprintf(base, sizeof base, "string");
    size_t o = (size_t)snprintf(out, size, "%s[%u]", base, d->length);
    uint32_t shown = 0;
    if (o >= size)
        return;
    if (d->read == WATCH_READ_STRINGS) {
        for (uint32_t i = 0; i < d->strings; i++, shown++) {
            char one[WATCH_ELEMENT_CHARS * 3 + 32];
            if (d->string_len[i] == UINT32_MAX)
                snprintf(one, sizeof one, "null");
            else
                format_string(d->string_text[i], d->string_chars[i], d->string_len[i], one,
                              sizeof one);
            if (o + strlen(one) + 10 >= size)
                break; /* room for ", ...}" kept */
            o += (size_t)snprintf(out + o, size - o, "%s%s", i ? ", " : " {", one);
        }
    } else if (kind && kind < sizeof element_sizes && element_sizes[kind]) {
        uint32_t es = element_sizes[kind];
        for (uint32_t i = 0; i < d->length && i < WATCH_ARRAY_SHOWN && (i + 1) * es <= d->nbytes;
             i++, shown++) {
            char one[48];
            format_primitive(kind, d->bytes + i * es, one, sizeof one);
            if (o + strlen(one) + 10 >= size)
                break; /* room for ", ...}" kept */
            o += (size_t)snprintf(out + o, size - o, "%s%s", i ? ", " : " {", one);
        }
    }
    if (shown)
        snprintf(out + o, size - o, "%s}", shown < d->length ? ", ..." : "");
}

void watch_format_value(const struct watch_value *v, const struct watch_decoded *d, char *out,
                        size_t size)
{
    const uint8_t *b = d->bytes;
    switch (d->read) {
    case WATCH_READ_STRING:
        watch_format_string(d, out, size);
        return;
    case WATCH_READ_REF:
    case WATCH_READ_OBJECT:
        snprintf(out, size, "%s", d->is_null ? "null" : d->runtime_type[0] ? d->runtime_type : v->type);
        return;
    case WATCH_READ_STRUCT:
        snprintf(out, size, "%s", v->type);
        return;
    case WATCH_READ_GENERIC: /* not resolved by the loop (watch_resolve) */
        snprintf(out, size, "%s", v->type);
        return;
    case WATCH_READ_ARRAY:
    case WATCH_READ_STRINGS:
        if (d->is_null)
            snprintf(out, size, "null");
        else
            format_array(v, d, out, size);
        return;
    case WATCH_READ_OUT:
        snprintf(out, size, "out");
        return;
    case WATCH_READ_BYTES:
        break;
    default:
        snprintf(out, size, "%s", v->type);
        return;
    }
    uint64_t u8 = 0;
    int64_t i8;
    switch (v->show) {
    case WATCH_SHOW_DECIMAL:
        format_decimal(b, out, size);
        return;
    case WATCH_SHOW_DATETIME:
        memcpy(&u8, b, 8);
        watch_format_datetime(u8, out, size);
        return;
    case WATCH_SHOW_TIMESPAN:
        memcpy(&i8, b, 8);
        watch_format_timespan(i8, out, size);
        return;
    case WATCH_SHOW_GUID:
        watch_format_guid(b, out, size);
        return;
    case WATCH_SHOW_SPAN: {
        int32_t len;
        memcpy(&len, b + 8, 4);
        snprintf(out, size, "%s[%d]", v->type, len);
        return;
    }
    case WATCH_SHOW_ENUM: {
        uint8_t es = v->kind < sizeof element_sizes ? element_sizes[v->kind] : 0;
        if (!es || v->enum_index >= WATCH_MAX_ENUMS) {
            snprintf(out, size, "%s", v->type);
            return;
        }
        memcpy(&u8, b, es);
        int signed_kind = v->kind == SIG_I1 || v->kind == SIG_I2 || v->kind == SIG_I4;
        if (signed_kind && es < 8 && (u8 >> (es * 8 - 1)) & 1)
            u8 |= ~0ull << (es * 8);
        watch_format_enum(&watch_enums[v->enum_index], v->type, (int64_t)u8, out, size);
        return;
    }
    default:
        if (v->kind == SIG_VALUETYPE || v->kind == SIG_GENERIC || v->kind == SIG_OBJECT)
            snprintf(out, size, "%s", v->type);
        else
            format_primitive(v->kind, b, out, size);
    }
}

const char *watch_type_shown(const struct watch_value *v, const struct watch_decoded *d)
{
    return d->runtime_type[0] && !d->is_null ? d->runtime_type : v->type;
}
