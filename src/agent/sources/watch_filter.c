/*
 * watch_filter: `--where` in the agent.  The expression (parsed by
 * common/watch_where.c) is bound to each watched method when it is taken
 * -- the argument found by name (or the result), the literal turned into
 * the value's own kind (an enum constant's number, a string's UTF-16) --
 * and evaluated by the probe on the value in place, before the call is
 * taken: a call filtered out costs no place in the queue, the rate or
 * --count, and is counted.  A comparison on `result` is made at the
 * return (its entry was taken; its line is then dropped and counted).
 */
#include <stdio.h>
#include <string.h>

#include "agent/sources/watch.h"

/* The kind of a literal the value's kind wants, for the error line. */
static const char *wanted_literal(uint8_t cls)
{
    switch (cls) {
    case WATCH_FILTER_SIGNED:
    case WATCH_FILTER_UNSIGNED:
    case WATCH_FILTER_FLOAT: return "a number";
    case WATCH_FILTER_BOOL: return "true or false";
    case WATCH_FILTER_STRING: return "a \"string\" or null";
    case WATCH_FILTER_ENUM: return "one of its constants' names or a number";
    case WATCH_FILTER_NULL: return "null (== or !=)";
    default: return "nothing (its values cannot be compared)";
    }
}

static uint8_t class_of(const struct watch_value *v)
{
    switch (v->read) {
    case WATCH_READ_STRING: return WATCH_FILTER_STRING;
    case WATCH_READ_REF:
    case WATCH_READ_ARRAY:
    case WATCH_READ_STRINGS: return WATCH_FILTER_NULL;
    case WATCH_READ_BYTES: break;
    default: return WATCH_FILTER_NONE;
    }
    if (v->show == WATCH_SHOW_ENUM)
        return WATCH_FILTER_ENUM;
    if (v->show == WATCH_SHOW_DECIMAL)
        return WATCH_FILTER_FLOAT;
    if (v->show != WATCH_SHOW_PLAIN)
        return WATCH_FILTER_NONE;
    switch (v->kind) {
    case SIG_BOOL: return WATCH_FILTER_BOOL;
    case SIG_I1: case SIG_I2: case SIG_I4: case SIG_I8: case SIG_I: return WATCH_FILTER_SIGNED;
    case SIG_U1: case SIG_U2: case SIG_U4: case SIG_U8: case SIG_U: case SIG_CHAR:
        return WATCH_FILTER_UNSIGNED;
    case SIG_R4: case SIG_R8: return WATCH_FILTER_FLOAT;
    default: return WATCH_FILTER_NONE;
    }
}

int watch_filter_bind(const struct watch_where_expr *e, struct watch_method *m, char *why,
                      size_t why_size)
{
    struct watch_filter *f = &m->filter;
    memset(f, 0, sizeof *f);
    const struct watch_value *v = NULL;
    if (!strcmp(e->name, "result")) {
        if (m->ret.kind == SIG_VOID)
            return snprintf(why, why_size, "%s returns nothing (void): no 'result' to compare",
                            m->display), -1;
        f->arg = WATCH_FILTER_RESULT;
        v = &m->ret;
    } else {
        for (uint32_t i = 0; i < m->taken; i++)
            if (!strcmp(m->args[i].name, e->name)) {
                f->arg = (uint8_t)i;
                v = &m->args[i];
            }
    }
    if (!v) {
        size_t o = (size_t)snprintf(why, why_size, "%s has no argument '%s' (its arguments: ",
                                    m->display, e->name);
        for (uint32_t i = 0; i < m->taken && o < why_size; i++)
            o += (size_t)snprintf(why + o, why_size - o, "%s%s", i ? ", " : "", m->args[i].name);
        if (o < why_size)
            snprintf(why + o, why_size - o, "%s%sresult)", m->taken ? "; " : "",
                     m->ret.kind == SIG_VOID ? "no " : "");
        return -1;
    }
    uint8_t cls = class_of(v);
    f->op = e->op;
    f->cls = cls;
    int ok = 0;
    switch (cls) {
    case WATCH_FILTER_SIGNED:
    case WATCH_FILTER_UNSIGNED:
        ok = e->literal == WHERE_INT || e->literal == WHERE_FLOAT;
        if (ok && e->literal == WHERE_FLOAT) { /* qty > 2.5: compared as numbers */
            f->cls = WATCH_FILTER_FLOAT;
            f->f = e->f;
        }
        f->i = e->i;
        f->f = e->f;
        break;
    case WATCH_FILTER_FLOAT:
        ok = e->literal == WHERE_INT || e->literal == WHERE_FLOAT;
        f->f = e->f;
        break;
    case WATCH_FILTER_BOOL:
        ok = e->literal == WHERE_BOOL;
        f->i = e->i;
        break;
    case WATCH_FILTER_STRING:
        ok = e->literal == WHERE_STRING || e->literal == WHERE_NULL;
        if (e->literal == WHERE_NULL) {
            f->cls = WATCH_FILTER_NULL;
        } else {
            f->len = e->len;
            for (uint32_t i = 0; i < e->len; i++)
                f->text[i] = (uint8_t)e->text[i]; /* bytes as Latin-1 */
        }
        break;
    case WATCH_FILTER_ENUM: {
        f->cls = WATCH_FILTER_SIGNED;
        if (e->literal == WHERE_INT) {
            ok = 1;
            f->i = e->i;
        } else if (e->literal == WHERE_NAME && v->enum_index < WATCH_MAX_ENUMS) {
            const struct watch_enum *en = &watch_enums[v->enum_index];
            for (uint32_t i = 0; i < en->count; i++)
                if (!strcmp(en->names[i], e->text)) {
                    ok = 1;
                    f->i = en->values[i];
                }
            if (!ok) {
                size_t o = (size_t)snprintf(why, why_size, "%s is not a constant of %s (",
                                            e->text, v->type);
                for (uint32_t i = 0; i < en->count && o < why_size; i++)
                    o += (size_t)snprintf(why + o, why_size - o, "%s%s", i ? ", " : "",
                                          en->names[i]);
                if (o < why_size)
                    snprintf(why + o, why_size - o, ")");
                return -1;
            }
        }
        break;
    }
    case WATCH_FILTER_NULL:
        ok = e->literal == WHERE_NULL;
        break;
    default:
        break;
    }
    if (e->op == WHERE_CONTAINS && f->cls != WATCH_FILTER_STRING)
        ok = 0;
    if (!ok)
        return snprintf(why, why_size, "%s's '%s' is a %s: compare it with %s", m->display,
                        e->name, v->type, wanted_literal(cls)), -1;
    f->on = 1;
    return 0;
}

static int compare(int c, uint8_t op)
{
    switch (op) {
    case WHERE_EQ: return c == 0;
    case WHERE_NE: return c != 0;
    case WHERE_LT: return c < 0;
    case WHERE_LE: return c <= 0;
    case WHERE_GT: return c > 0;
    case WHERE_GE: return c >= 0;
    default: return 0;
    }
}

/* A System.Decimal's bits as a double (for comparing). */
static double decimal_value(const uint8_t b[16])
{
    uint32_t flags, hi;
    uint64_t lo;
    memcpy(&flags, b, 4);
    memcpy(&hi, b + 4, 4);
    memcpy(&lo, b + 8, 8);
    double v = (double)hi * 18446744073709551616.0 + (double)lo;
    for (unsigned s = (flags >> 16) & 0xff; s > 0 && s <= 28; s--)
        v /= 10;
    return flags & 0x80000000u ? -v : v;
}

int watch_filter_keeps(const struct watch_filter *f, const struct watch_value *v, const void *addr)
{
    if (addr && v->byref)
        addr = *(const void *const *)addr;
    if (!addr)
        return 0;
    uint64_t raw = 0;
    if (v->read == WATCH_READ_BYTES && v->size <= 8)
        memcpy(&raw, addr, v->size);
    switch (f->cls) {
    case WATCH_FILTER_SIGNED: {
        int64_t x = (int64_t)raw;
        unsigned bits = v->size * 8u;
        if (bits < 64 && (raw >> (bits - 1)) & 1)
            x = (int64_t)(raw | ~0ull << bits);
        return compare(x < f->i ? -1 : x > f->i, f->op);
    }
    case WATCH_FILTER_UNSIGNED: {
        if (f->i < 0)
            return compare(1, f->op);
        uint64_t y = (uint64_t)f->i;
        return compare(raw < y ? -1 : raw > y, f->op);
    }
    case WATCH_FILTER_FLOAT: {
        double x;
        if (v->show == WATCH_SHOW_DECIMAL) {
            x = decimal_value(addr);
        } else if (v->kind == SIG_R4) {
            float r4;
            memcpy(&r4, addr, 4);
            x = r4;
        } else if (v->kind == SIG_R8) {
            memcpy(&x, addr, 8);
        } else if (v->kind == SIG_I1 || v->kind == SIG_I2 || v->kind == SIG_I4 ||
                   v->kind == SIG_I8 || v->kind == SIG_I) {
            unsigned bits = v->size * 8u;
            int64_t s = (int64_t)raw;
            if (bits < 64 && (raw >> (bits - 1)) & 1)
                s = (int64_t)(raw | ~0ull << bits);
            x = (double)s;
        } else {
            x = (double)raw;
        }
        if (x != x)
            return f->op == WHERE_NE; /* NaN: only != holds */
        return compare(x < f->f ? -1 : x > f->f, f->op);
    }
    case WATCH_FILTER_BOOL:
        return compare((raw & 0xff) != 0 ? (f->i ? 0 : 1) : (f->i ? -1 : 0), f->op);
    case WATCH_FILTER_NULL: {
        const void *obj = *(const void *const *)addr;
        return f->op == WHERE_EQ ? obj == NULL : obj != NULL;
    }
    case WATCH_FILTER_STRING: {
        const char *obj = *(const char *const *)addr;
        if (!obj)
            return f->op == WHERE_NE;
        int32_t len;
        memcpy(&len, obj + 8, 4);
        if (len < 0)
            return 0;
        const uint16_t *chars = (const uint16_t *)(const void *)(obj + 12);
        if (f->op == WHERE_CONTAINS) {
            if (!f->len)
                return 1;
            for (uint32_t at = 0; at + f->len <= (uint32_t)len; at++) {
                uint32_t k = 0;
                while (k < f->len && chars[at + k] == f->text[k])
                    k++;
                if (k == f->len)
                    return 1;
            }
            return 0;
        }
        /* ordinal comparison of UTF-16 units */
        uint32_t n = (uint32_t)len < f->len ? (uint32_t)len : f->len;
        int c = 0;
        for (uint32_t k = 0; k < n && !c; k++)
            c = chars[k] < f->text[k] ? -1 : chars[k] > f->text[k];
        if (!c)
            c = (uint32_t)len < f->len ? -1 : (uint32_t)len > f->len;
        return compare(c, f->op);
    }
    default:
        return 1;
    }
}
