/*
 * pdefs: see pdefs.h.
 */
#include "cli/pdefs.h"

#include <string.h>

#include "common/hash.h"
#include "common/mem.h"
#include "format/format.h"

/* What an interned text costs beyond its bytes: its copy's header, its
 * pointer and length, its index slots. */
#define TEXT_OVERHEAD 48

static const char *oom = "out of memory";

int pdefs_init(struct pdefs *d, uint64_t budget)
{
    memset(d, 0, sizeof *d);
    struct ptable *tables[] = {&d->strings, &d->frames, &d->stacks, &d->threads};
    for (size_t i = 0; i < 4; i++) {
        map64_init(&tables[i]->index);
        tables[i]->next = 1; /* id 0 is "none" */
    }
    map64_init(&d->stack_by_content);
    d->budget = d->threshold = budget;
    return strtab_init(&d->texts);
}

static void table_free(struct ptable *t)
{
    mem_free(t->defs);
    map64_free(&t->index);
    memset(t, 0, sizeof *t);
}

/* The tables, texts and pool (not the budget and the counters). */
static void release(struct pdefs *d)
{
    strtab_free(&d->texts);
    table_free(&d->strings);
    table_free(&d->frames);
    table_free(&d->stacks);
    table_free(&d->threads);
    mem_free(d->pool);
    map64_free(&d->stack_by_content);
}

void pdefs_free(struct pdefs *d)
{
    release(d);
    memset(d, 0, sizeof *d);
}

int pdefs_defined(const struct ptable *t, uint64_t id)
{
    return id > 0 && id < t->next;
}

struct pdef *pdefs_find(struct pdefs *d, struct ptable *t, uint64_t id)
{
    uint32_t at;
    if (id == 0 || id > UINT32_MAX || !map64_get(&t->index, id, &at))
        return NULL;
    t->defs[at].used = d->now;
    return &t->defs[at];
}

const char *pdefs_text(const struct pdefs *d, uint32_t text, uint32_t *len)
{
    *len = text < d->texts.count ? d->texts.lens[text] : 0;
    return text < d->texts.count && d->texts.strs[text] ? d->texts.strs[text] : "";
}

static struct pdef *add(struct ptable *t, const struct pdef *def)
{
    struct pdef *grown = mem_grow(t->defs, &t->cap, t->count + 1, sizeof *grown);
    if (!grown)
        return NULL;
    t->defs = grown;
    if (map64_put(&t->index, def->id, (uint32_t)t->count) < 0)
        return NULL;
    t->defs[t->count] = *def;
    return &t->defs[t->count++];
}

static uint32_t intern(struct pdefs *d, const void *text, size_t n)
{
    int is_new;
    uint32_t id = strtab_intern(&d->texts, text, n, &is_new);
    if (id != UINT32_MAX && is_new)
        d->text_bytes += n + TEXT_OVERHEAD;
    return id;
}

const char *pdefs_string(struct pdefs *d, uint64_t id, const void *text, size_t n)
{
    if (id != d->strings.next)
        return "string ids out of sequence";
    uint32_t t = intern(d, text, n);
    struct pdef def = {(uint32_t)id, d->now, t, 0, 0, 0, 0};
    if (t == UINT32_MAX || !add(&d->strings, &def))
        return oom;
    d->strings.next++;
    return NULL;
}

/* The text of a string id (0: none, or forgotten: counted). */
static uint32_t text_of(struct pdefs *d, uint64_t string)
{
    if (!string)
        return 0;
    struct pdef *s = pdefs_find(d, &d->strings, string);
    if (!s) {
        d->forgotten_refs++;
        return 0;
    }
    return s->a;
}

const char *pdefs_frame(struct pdefs *d, uint64_t id, uint8_t kind, uint64_t module,
                        uint64_t type, uint64_t name, uint64_t extra)
{
    if (id != d->frames.next || id > UINT32_MAX)
        return "frame ids out of sequence";
    if (kind < 1 || kind > FMT_FRAME_KIND_MAX)
        return "unknown frame kind";
    if ((module && !pdefs_defined(&d->strings, module)) || (type && !pdefs_defined(&d->strings, type)) ||
        (name && !pdefs_defined(&d->strings, name)))
        return "frame refers to an undefined string";
    if (kind == FMT_FRAME_LABEL && extra && !pdefs_defined(&d->frames, extra))
        return "label frame refers to an undefined frame";
    if (kind == FMT_FRAME_LABEL)
        pdefs_find(d, &d->frames, extra);
    struct pdef def = {(uint32_t)id, d->now, text_of(d, module), text_of(d, type), text_of(d, name),
                       kind, extra};
    if (!add(&d->frames, &def))
        return oom;
    d->frames.next++;
    return NULL;
}

static uint64_t content_hash(const uint32_t *frames, uint32_t depth)
{
    return hash_bytes(frames, depth * sizeof *frames, 0x5eed);
}

const char *pdefs_stack(struct pdefs *d, uint64_t id, const uint32_t *frames, uint32_t depth)
{
    if (id != d->stacks.next || id > UINT32_MAX)
        return "stack ids out of sequence";
    /* its frames are needed now, as long as it is */
    for (uint32_t i = 0; i < depth; i++) {
        if (!pdefs_defined(&d->frames, frames[i]))
            return "stack refers to an undefined frame";
        pdefs_find(d, &d->frames, frames[i]);
    }
    /* the agent writes a stack again after forgetting its table: its
     * frames are kept once */
    uint32_t off = UINT32_MAX;
    uint64_t key = content_hash(frames, depth);
    for (;; key++) {
        uint32_t other;
        if (!map64_get(&d->stack_by_content, key, &other))
            break;
        const struct pdef *o = &d->stacks.defs[other];
        if (o->b == depth && !memcmp(d->pool + o->a, frames, depth * sizeof *frames)) {
            off = o->a;
            break;
        }
    }
    if (off == UINT32_MAX) {
        uint32_t *pool = mem_grow(d->pool, &d->pool_cap, d->pool_count + depth, sizeof *pool);
        if (!pool || map64_put(&d->stack_by_content, key, (uint32_t)d->stacks.count) < 0)
            return oom;
        d->pool = pool;
        memcpy(d->pool + d->pool_count, frames, depth * sizeof *frames);
        off = (uint32_t)d->pool_count;
        d->pool_count += depth;
    }
    struct pdef def = {(uint32_t)id, d->now, off, depth, 0, 0, 0};
    if (!add(&d->stacks, &def))
        return oom;
    d->stacks.next++;
    return NULL;
}

const char *pdefs_thread(struct pdefs *d, uint64_t id, uint64_t os_tid, uint64_t name)
{
    if (id == 0 || id > UINT32_MAX)
        return "thread id out of range";
    if (name && !pdefs_defined(&d->strings, name))
        return "thread refers to an undefined string";
    uint32_t text = text_of(d, name);
    struct pdef *t = pdefs_find(d, &d->threads, id);
    if (t) {
        t->a = text;
        t->x = os_tid;
        return NULL;
    }
    struct pdef def = {(uint32_t)id, d->now, text, 0, 0, 0, os_tid};
    if (!add(&d->threads, &def))
        return oom;
    if (id >= d->threads.next)
        d->threads.next = id + 1;
    return NULL;
}

uint64_t pdefs_bytes(const struct pdefs *d)
{
    const struct ptable *tables[] = {&d->strings, &d->frames, &d->stacks, &d->threads};
    uint64_t n = d->text_bytes + d->pool_cap * sizeof *d->pool +
                 d->stack_by_content.cap * (sizeof(uint64_t) + sizeof(uint32_t));
    for (size_t i = 0; i < 4; i++)
        n += tables[i]->cap * sizeof(struct pdef) +
             tables[i]->index.cap * (sizeof(uint64_t) + sizeof(uint32_t));
    return n;
}

/* ---- forgetting ----------------------------------------------------------- */

/* A table of the definitions kept, their texts moved to `texts`. */
static int keep(struct pdefs *d, const struct ptable *from, uint32_t since, struct strtab *texts,
                int text_fields, struct ptable *to)
{
    memset(to, 0, sizeof *to);
    map64_init(&to->index);
    to->next = from->next;
    for (size_t i = 0; i < from->count; i++) {
        struct pdef def = from->defs[i];
        if (def.used < since)
            continue;
        uint32_t *fields[3] = {&def.a, &def.b, &def.c};
        for (int k = 0; k < text_fields; k++) {
            uint32_t len;
            const char *s = pdefs_text(d, *fields[k], &len);
            int is_new;
            *fields[k] = *fields[k] ? strtab_intern(texts, s, len, &is_new) : 0;
            if (*fields[k] == UINT32_MAX)
                return -1;
        }
        if (!add(to, &def))
            return -1;
    }
    return 0;
}

int pdefs_compact(struct pdefs *d, uint32_t since)
{
    /* what kept stacks and labels need is kept with them */
    for (size_t i = 0; i < d->stacks.count; i++) {
        const struct pdef *st = &d->stacks.defs[i];
        if (st->used < since)
            continue;
        for (uint32_t k = 0; k < st->b; k++) {
            uint32_t at;
            if (map64_get(&d->frames.index, d->pool[st->a + k], &at) && d->frames.defs[at].used < since)
                d->frames.defs[at].used = since;
        }
    }
    for (size_t i = 0; i < d->frames.count; i++) {
        const struct pdef *f = &d->frames.defs[i];
        uint32_t at;
        if (f->used >= since && f->kind == FMT_FRAME_LABEL && f->x &&
            map64_get(&d->frames.index, f->x, &at) && d->frames.defs[at].used < since)
            d->frames.defs[at].used = since;
    }
    struct strtab texts;
    struct ptable strings, frames, stacks, threads;
    memset(&strings, 0, sizeof strings);
    memset(&frames, 0, sizeof frames);
    memset(&stacks, 0, sizeof stacks);
    memset(&threads, 0, sizeof threads);
    struct map64 by_content, moved;
    map64_init(&by_content);
    map64_init(&moved);
    uint32_t *pool = NULL;
    size_t pool_count = 0, pool_cap = 0;
    if (strtab_init(&texts) < 0)
        return -1;
    int rc = -1;
    if (keep(d, &d->strings, since, &texts, 1, &strings) < 0 ||
        keep(d, &d->frames, since, &texts, 3, &frames) < 0 ||
        keep(d, &d->threads, since, &texts, 1, &threads) < 0 ||
        keep(d, &d->stacks, since, &texts, 0, &stacks) < 0)
        goto out;
    /* the kept stacks' frames, each distinct stack once */
    for (size_t i = 0; i < stacks.count; i++) {
        struct pdef *st = &stacks.defs[i];
        uint32_t off;
        if (!map64_get(&moved, st->a, &off)) {
            uint32_t *grown = mem_grow(pool, &pool_cap, pool_count + st->b, sizeof *grown);
            if (!grown)
                goto out;
            pool = grown;
            memcpy(pool + pool_count, d->pool + st->a, st->b * sizeof *pool);
            off = (uint32_t)pool_count;
            pool_count += st->b;
            uint64_t key = content_hash(pool + off, st->b);
            uint32_t other;
            while (map64_get(&by_content, key, &other))
                key++;
            if (map64_put(&moved, st->a, off) < 0 || map64_put(&by_content, key, (uint32_t)i) < 0)
                goto out;
        }
        st->a = off;
    }
    uint64_t before = d->strings.count + d->frames.count + d->stacks.count + d->threads.count;
    uint64_t after = strings.count + frames.count + stacks.count + threads.count;
    release(d);
    d->texts = texts;
    d->text_bytes = 0;
    for (size_t i = 1; i < texts.count; i++)
        d->text_bytes += texts.lens[i] + TEXT_OVERHEAD;
    d->strings = strings;
    d->frames = frames;
    d->stacks = stacks;
    d->threads = threads;
    d->pool = pool;
    d->pool_count = pool_count;
    d->pool_cap = pool_cap;
    d->stack_by_content = by_content;
    map64_free(&moved);
    d->forgotten += before - after;
    d->compactions++;
    uint64_t now_bytes = pdefs_bytes(d);
    d->threshold = now_bytes * 2 > d->budget ? now_bytes * 2 : d->budget;
    return 0;
out:
    strtab_free(&texts);
    table_free(&strings);
    table_free(&frames);
    table_free(&stacks);
    table_free(&threads);
    mem_free(pool);
    map64_free(&by_content);
    map64_free(&moved);
    return rc;
}
