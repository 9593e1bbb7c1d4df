/*
 * thread_ids: see thread_ids.h.
 */
#include "agent/thread_ids.h"

#include <string.h>

#include "agent/os_thread.h"
#include "common/clock.h"
#include "common/mem.h"

void thread_ids_init(struct thread_ids *t)
{
    memset(t, 0, sizeof *t);
    map64_init(&t->of_tid);
    map64_init(&t->ended_id);
    map64_init(&t->ended_at);
    t->next_id = 1;
}

void thread_ids_free(struct thread_ids *t)
{
    map64_free(&t->of_tid);
    map64_free(&t->ended_id);
    map64_free(&t->ended_at);
    mem_free(t->v);
    mem_free(t->views);
    memset(t, 0, sizeof *t);
}

static void write_name(struct recorder *out, const struct tid_entry *e, const char *name)
{
    recorder_thread(out, e->id, (uint64_t)e->tid, name && name[0] ? name : NULL);
}

uint32_t thread_ids_find(const struct thread_ids *t, pid_t tid)
{
    uint32_t at;
    return map64_get(&t->of_tid, (uint64_t)tid, &at) ? t->v[at].id : 0;
}

uint32_t thread_ids_get(struct thread_ids *t, struct recorder *out, pid_t tid)
{
    uint32_t at;
    if (map64_get(&t->of_tid, (uint64_t)tid, &at))
        return t->v[at].id;
    struct tid_entry *grown = mem_grow(t->v, &t->cap, t->count + 1, sizeof *t->v);
    if (!grown)
        return 0;
    t->v = grown;
    if (map64_put(&t->of_tid, (uint64_t)tid, (uint32_t)t->count) < 0)
        return 0;
    struct tid_entry *e = &t->v[t->count++];
    memset(e, 0, sizeof *e);
    e->tid = tid;
    e->id = t->next_id++;
    char name[96];
    os_thread_name(tid, name, sizeof name);
    write_name(out, e, name);
    e->name_checks = 1;
    return e->id;
}

uint32_t thread_ids_get_at(struct thread_ids *t, struct recorder *out, pid_t tid, uint64_t time)
{
    uint32_t id, at_ms;
    if (!map64_get(&t->of_tid, (uint64_t)tid, &id) &&
        map64_get(&t->ended_id, (uint64_t)tid, &id) &&
        map64_get(&t->ended_at, (uint64_t)tid, &at_ms) &&
        time < (uint64_t)at_ms << 24)
        return id;
    return thread_ids_get(t, out, tid);
}

uint32_t thread_ids_named(struct thread_ids *t, struct recorder *out, pid_t tid, uint64_t time,
                    const char *name)
{
    uint32_t id = thread_ids_get_at(t, out, tid, time);
    uint32_t at;
    if (id && map64_get(&t->of_tid, (uint64_t)tid, &at) && t->v[at].id == id)
        t->v[at].name_checks = 2;
    if (id)
        recorder_thread(out, id, (uint64_t)tid, name && name[0] ? name : NULL);
    return id;
}

void thread_ids_ended(struct thread_ids *t, pid_t tid)
{
    uint32_t at;
    if (!map64_get(&t->of_tid, (uint64_t)tid, &at))
        return;
    /* remembered, for the events it queued before its end was noticed */
    map64_put(&t->ended_id, (uint64_t)tid, t->v[at].id);
    map64_put(&t->ended_at, (uint64_t)tid, (uint32_t)((clock_now_ns() >> 24) + 1));
    map64_remove(&t->of_tid, (uint64_t)tid);
    /* the last entry takes the ended one's place */
    size_t last = t->count - 1;
    if (at != last) {
        t->v[at] = t->v[last];
        map64_put(&t->of_tid, (uint64_t)t->v[at].tid, at);
    }
    t->count--;
}

void thread_ids_update_names(struct thread_ids *t, struct recorder *out)
{
    long count = thread_registry_snapshot(&t->views, &t->views_cap);
    for (long i = 0; i < count; i++) {
        const struct thread_view *v = &t->views[i];
        uint32_t at;
        if (!v->os_tid || !map64_get(&t->of_tid, (uint64_t)v->os_tid, &at))
            continue;
        struct tid_entry *e = &t->v[at];
        if (e->managed && e->name_version == v->name_version + 1)
            continue;
        e->managed = 1;
        e->name_version = v->name_version + 1;
        if (v->name[0]) {
            write_name(out, e, v->name);
        } else if (e->name_checks < 2) {
            char name[96];
            os_thread_name(e->tid, name, sizeof name);
            write_name(out, e, name);
            e->name_checks = 2;
        }
    }
    for (size_t i = 0; i < t->count; i++) {
        struct tid_entry *e = &t->v[i];
        if (e->managed || e->name_checks >= 2)
            continue;
        char name[96];
        os_thread_name(e->tid, name, sizeof name);
        write_name(out, e, name);
        e->name_checks = 2;
    }
}
