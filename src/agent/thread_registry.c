/*
 * thread_registry: see thread_registry.h.  Slots are handed out from pages of 256; a free
 * list recycles slots of dead threads (their recording ids are not
 * recycled).  ThreadID -> slot lookups go through a map under the lock.
 */
#include "agent/thread_registry.h"

#include <pthread.h>
#include <stdio.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "common/map.h"
#include "common/mem.h"

#define PAGE_SLOTS 256u
#define MAX_PAGES 4096u /* a million threads alive at once */
#define NO_SLOT UINT32_MAX

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct thread_slot *pages[MAX_PAGES];
static uint32_t slots_made;
static uint32_t free_head = NO_SLOT;
static uint32_t next_id = 1;
static struct map64 by_managed; /* ThreadID -> slot index */
static _Atomic(struct thread_slot *) walking;
static _Atomic uint64_t destroy_waits;
static _Atomic uint64_t changes; /* bumped when a thread gets a tid, a name or dies */
/* catch-up after an attach: ids that died while the runtime's list of
 * threads was being taken in (under the lock) */
static int adopting;
static struct map64 died_while_adopting;

static struct thread_slot *slot_at(uint32_t index)
{
    return &pages[index / PAGE_SLOTS][index % PAGE_SLOTS];
}

int thread_registry_init(void)
{
    return 0;
}

void thread_registry_shutdown(void)
{
    pthread_mutex_lock(&lock);
    for (uint32_t p = 0; p < MAX_PAGES && pages[p]; p++) {
        mem_free(pages[p]);
        pages[p] = NULL;
    }
    slots_made = 0;
    free_head = NO_SLOT;
    map64_free(&by_managed);
    map64_free(&died_while_adopting);
    adopting = 0;
    atomic_store(&walking, NULL);
    pthread_mutex_unlock(&lock);
}

/* Finds the slot of a ThreadID, creating it when `create`.  Under lock. */
static struct thread_slot *find_locked(uintptr_t managed, int create)
{
    uint32_t index;
    if (map64_get(&by_managed, managed, &index))
        return slot_at(index);
    if (!create)
        return NULL;
    if (free_head != NO_SLOT) {
        index = free_head;
        free_head = slot_at(index)->next_free;
    } else {
        if (slots_made / PAGE_SLOTS >= MAX_PAGES)
            return NULL;
        if (slots_made % PAGE_SLOTS == 0) {
            struct thread_slot *page = mem_calloc(PAGE_SLOTS, sizeof *page);
            if (!page)
                return NULL;
            pages[slots_made / PAGE_SLOTS] = page;
        }
        index = slots_made++;
    }
    if (map64_put(&by_managed, managed, index) < 0) {
        struct thread_slot *s = slot_at(index);
        s->next_free = free_head;
        free_head = index;
        return NULL;
    }
    struct thread_slot *s = slot_at(index);
    s->managed = managed;
    atomic_store(&s->os_tid, 0);
    s->id = next_id++;
    s->name_version = 0;
    s->name[0] = '\0';
    s->stack_lo = s->stack_hi = 0;
    atomic_store(&s->state, THREAD_LIVE);
    return s;
}

void thread_registry_created(uintptr_t managed)
{
    pthread_mutex_lock(&lock);
    find_locked(managed, 1);
    pthread_mutex_unlock(&lock);
}

void thread_registry_assigned_os_thread(uintptr_t managed, pid_t os_tid)
{
    pthread_mutex_lock(&lock);
    struct thread_slot *s = find_locked(managed, 1);
    if (s)
        atomic_store(&s->os_tid, os_tid);
    pthread_mutex_unlock(&lock);
    atomic_fetch_add(&changes, 1);
}

void thread_registry_set_stack(uintptr_t managed, uintptr_t lo, uintptr_t hi)
{
    pthread_mutex_lock(&lock);
    struct thread_slot *s = find_locked(managed, 1);
    if (s) {
        s->stack_lo = lo;
        s->stack_hi = hi;
    }
    pthread_mutex_unlock(&lock);
}

void thread_registry_renamed(uintptr_t managed, const char *utf8_name)
{
    pthread_mutex_lock(&lock);
    struct thread_slot *s = find_locked(managed, 1);
    if (s) {
        snprintf(s->name, sizeof s->name, "%s", utf8_name);
        s->name_version++;
    }
    pthread_mutex_unlock(&lock);
    atomic_fetch_add(&changes, 1);
}

#define ENDED_MAX 256
static pid_t ended[ENDED_MAX]; /* under lock */
static size_t ended_count;

size_t thread_registry_take_ended(pid_t *out, size_t max)
{
    pthread_mutex_lock(&lock);
    size_t n = ended_count < max ? ended_count : max;
    memcpy(out, ended, n * sizeof *out);
    memmove(ended, ended + n, (ended_count - n) * sizeof *ended);
    ended_count -= n;
    pthread_mutex_unlock(&lock);
    return n;
}

void thread_registry_destroyed(uintptr_t managed)
{
    atomic_fetch_add(&changes, 1);
    pthread_mutex_lock(&lock);
    struct thread_slot *s = find_locked(managed, 0);
    uint32_t index = 0;
    if (s) {
        atomic_store(&s->state, THREAD_DEAD);
        map64_get(&by_managed, managed, &index);
        pid_t tid = atomic_load(&s->os_tid);
        if (tid > 0 && ended_count < ENDED_MAX)
            ended[ended_count++] = tid;
    }
    else if (adopting)
        map64_put(&died_while_adopting, managed, 1);
    pthread_mutex_unlock(&lock);
    if (!s)
        return;

    /* rule 2: let a walk of this thread finish before the runtime frees it */
    if (atomic_load(&walking) == s) {
        atomic_fetch_add(&destroy_waits, 1);
        while (atomic_load(&walking) == s) {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }

    pthread_mutex_lock(&lock);
    uint32_t current;
    if (map64_get(&by_managed, managed, &current) && current == index) {
        map64_remove(&by_managed, managed);
        atomic_fetch_add(&s->generation, 1);
        atomic_store(&s->state, THREAD_FREE);
        s->next_free = free_head;
        free_head = index;
    }
    pthread_mutex_unlock(&lock);
}

void thread_registry_adopt_begin(void)
{
    pthread_mutex_lock(&lock);
    adopting = 1;
    pthread_mutex_unlock(&lock);
}

int thread_registry_adopt(uintptr_t managed, pid_t os_tid)
{
    pthread_mutex_lock(&lock);
    uint32_t dead;
    struct thread_slot *s = NULL;
    if (!map64_get(&died_while_adopting, managed, &dead)) {
        s = find_locked(managed, 1);
        if (s && os_tid && !atomic_load(&s->os_tid))
            atomic_store(&s->os_tid, os_tid);
    }
    pthread_mutex_unlock(&lock);
    if (s)
        atomic_fetch_add(&changes, 1);
    return s != NULL;
}

void thread_registry_adopt_end(void)
{
    pthread_mutex_lock(&lock);
    adopting = 0;
    map64_free(&died_while_adopting);
    pthread_mutex_unlock(&lock);
}

int thread_registry_lookup(uintptr_t managed, pid_t *os_tid, char *name, size_t size)
{
    int rc = -1;
    pthread_mutex_lock(&lock);
    struct thread_slot *s = find_locked(managed, 0);
    if (s) {
        *os_tid = atomic_load(&s->os_tid);
        snprintf(name, size, "%s", s->name);
        rc = 0;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

long thread_registry_snapshot(struct thread_view **out, size_t *cap)
{
    long n = 0;
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < slots_made; i++) {
        struct thread_slot *s = slot_at(i);
        if (atomic_load(&s->state) != THREAD_LIVE)
            continue;
        struct thread_view *grown = mem_grow(*out, cap, (size_t)n + 1, sizeof **out);
        if (!grown) {
            n = -1;
            break;
        }
        *out = grown;
        struct thread_view *v = &(*out)[n++];
        v->slot = s;
        v->generation = atomic_load(&s->generation);
        v->managed = s->managed;
        v->os_tid = atomic_load(&s->os_tid);
        v->id = s->id;
        v->name_version = s->name_version;
        memcpy(v->name, s->name, sizeof v->name);
        v->stack_lo = s->stack_lo;
        v->stack_hi = s->stack_hi;
    }
    pthread_mutex_unlock(&lock);
    return n;
}

int thread_registry_begin_walk(const struct thread_view *v)
{
    atomic_store(&walking, v->slot);
    if (atomic_load(&v->slot->state) == THREAD_LIVE &&
        atomic_load(&v->slot->generation) == v->generation)
        return 1;
    atomic_store(&walking, NULL);
    return 0;
}

void thread_registry_end_walk(void)
{
    atomic_store(&walking, NULL);
}

void thread_registry_set_os_tid(const struct thread_view *v, pid_t os_tid)
{
    if (atomic_load(&v->slot->generation) == v->generation)
        atomic_store(&v->slot->os_tid, os_tid);
}

uint64_t thread_registry_destroy_waits(void)
{
    return atomic_load(&destroy_waits);
}

uint64_t thread_registry_changes(void)
{
    return atomic_load(&changes);
}
