/*
 * out_async: `report -f async` (and `corscope async -p PID`): the async
 * operations a process had pending at the last snapshot of a recording
 * made with --async=snapshots, as a forest of who awaits whom, like SOS
 * dumpasync.  A root is an operation nothing awaits (or a thread blocked
 * on it: [blocking wait]); its children are the operations it awaits.
 * Operations with the same path from the root (method and await, level by
 * level) are counted on one line: a server's thousand identical requests
 * are one branch with its count.  Each line says how long the oldest of
 * them has been stopped at that await, as far as the snapshots saw: ">="
 * when it was already there at the first snapshot.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/event_table.h"
#include "common/mem.h"

struct op {
    uint64_t id, awaiter, method, end, since, pending;
    int64_t state;
    size_t parent;   /* index of its awaiter among the ops, SIZE_MAX none */
    size_t node;     /* its line in the merged tree */
};

/* A line of the merged tree. */
struct node {
    size_t parent;   /* SIZE_MAX for a root line */
    uint64_t method, end;
    int64_t state;
    uint64_t count, oldest;
    int before_first; /* the oldest was there at the first snapshot */
};

struct tree {
    struct node *nodes;
    size_t count, cap;
    struct map64 index; /* hash of (parent, method, state, end) -> node */
};

static uint64_t key_of(size_t parent, uint64_t method, int64_t state, uint64_t end)
{
    uint64_t h = 0xcbf29ce484222325ull;
    uint64_t parts[4] = {parent, method, (uint64_t)state, end};
    for (int i = 0; i < 4; i++) {
        h ^= parts[i];
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h;
}

static size_t node_for(struct tree *t, size_t parent, uint64_t method, int64_t state, uint64_t end)
{
    uint64_t key = key_of(parent, method, state, end);
    uint32_t at;
    if (map64_get(&t->index, key, &at)) {
        const struct node *n = &t->nodes[at];
        if (n->parent == parent && n->method == method && n->state == state && n->end == end)
            return at;
    }
    struct node *grown = mem_grow(t->nodes, &t->cap, t->count + 1, sizeof *grown);
    if (!grown)
        return SIZE_MAX;
    t->nodes = grown;
    t->nodes[t->count] = (struct node){parent, method, end, state, 0, 0, 0};
    map64_put(&t->index, key, (uint32_t)t->count);
    return t->count++;
}

static void state_text(int64_t state, char *out, size_t size)
{
    if (state >= 0)
        snprintf(out, size, "await #%" PRId64, state);
    else if (state == -1)
        snprintf(out, size, "running");
    else if (size)
        out[0] = '\0'; /* not a state machine (a combinator's promise) */
}

struct printing {
    const struct event_table *e;
    const struct tree *t;
    FILE *out;
    const size_t *first, *next; /* each node's children, by count */
};

static int by_count(const void *a, const void *b, void *ctx)
{
    const struct tree *t = ctx;
    const struct node *x = &t->nodes[*(const size_t *)a], *y = &t->nodes[*(const size_t *)b];
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return x->oldest < y->oldest ? 1 : x->oldest > y->oldest ? -1 : 0;
}

static void print_node(const struct printing *pr, size_t at, int indent)
{
    const struct node *n = &pr->t->nodes[at];
    char age[32], state[32];
    event_table_duration_text(n->oldest, age, sizeof age);
    state_text(n->state, state, sizeof state);
    if (n->end && n->parent == SIZE_MAX) {
        /* what waits for the chain's root: a thread blocked on it */
        fprintf(pr->out, "%6" PRIu64 "  %-14s  %*s%s\n", n->count, "", indent, "",
                event_table_frame_name(pr->e, n->end));
        indent += 2;
    }
    fprintf(pr->out, "%6" PRIu64 "  %-3s%-11s  %*s%s%s%s%s\n", n->count,
            n->before_first ? ">=" : "", age, indent, "", event_table_frame_name(pr->e, n->method),
            state[0] ? "  (" : "", state, state[0] ? ")" : "");
    for (size_t c = pr->first[at]; c != SIZE_MAX; c = pr->next[c])
        print_node(pr, c, indent + 2);
}

/* What the snapshots cost the program: each one stopped it while the
 * heap was walked. */
static void footer(const struct profile *p, const struct report_options *o, FILE *out)
{
    struct event_table s;
    if (event_table_open(&s, p, o, FMT_EV_ASYNC_SNAPSHOT) < 0 || s.event < 0) {
        event_table_close(&s);
        return;
    }
    uint64_t n = 0, total = 0, longest = 0, objects = 0;
    for (const struct rec_record *x = event_table_next(&s, NULL); x; x = event_table_next(&s, x)) {
        uint64_t pause = event_table_value(&s, x, FMT_ASYNC_SNAPSHOT_PAUSE);
        n++;
        total += pause;
        longest = pause > longest ? pause : longest;
        objects = event_table_get(&s, x, FMT_ASYNC_SNAPSHOT_OBJECTS);
    }
    char mean[32], most[32];
    event_table_duration_text(n ? total / n : 0, mean, sizeof mean);
    event_table_duration_text(longest, most, sizeof most);
    fprintf(out, "# %" PRIu64 " snapshots of a heap of %" PRIu64 " objects; the program stopped "
            "%s for each (at most %s)\n", n, objects, mean, most);
    event_table_close(&s);
}

int report_async(const struct profile *p, const struct report_options *o, FILE *out)
{
    struct event_table e;
    if (event_table_open(&e, p, o, FMT_EV_ASYNC) < 0) {
        cli_error("out of memory while writing the async operations");
        return -1;
    }
    if (e.event < 0) {
        const struct rec_str *why = rec_info(e.r, FMT_INFO_ASYNC);
        if (why && why->len)
            fprintf(out, "# no snapshot of pending async operations: async %.*s\n", (int)why->len,
                    why->p);
        else
            fputs("# no snapshot of pending async operations in this recording (corscope async "
                  "-p PID, or record --async=snapshots)\n", out);
        event_table_close(&e);
        return 0;
    }
    uint64_t last = 0, first_since = UINT64_MAX, at_time = 0;
    for (const struct rec_record *x = event_table_next(&e, NULL); x; x = event_table_next(&e, x)) {
        uint64_t s = event_table_get(&e, x, FMT_ASYNC_SNAPSHOT);
        if (s > last)
            last = s;
        if (s == 1 && event_table_get(&e, x, FMT_ASYNC_SINCE) < first_since)
            first_since = event_table_get(&e, x, FMT_ASYNC_SINCE);
    }
    struct op *ops = NULL;
    size_t count = 0, cap = 0;
    struct map64 by_id;
    map64_init(&by_id);
    int failed = 0;
    for (const struct rec_record *x = event_table_next(&e, NULL); x; x = event_table_next(&e, x)) {
        if (event_table_get(&e, x, FMT_ASYNC_SNAPSHOT) != last)
            continue;
        struct op *grown = mem_grow(ops, &cap, count + 1, sizeof *grown);
        if (!grown) {
            failed = 1;
            break;
        }
        ops = grown;
        uint64_t zz = event_table_get(&e, x, FMT_ASYNC_STATE);
        ops[count] = (struct op){event_table_get(&e, x, FMT_ASYNC_OP),
                                 event_table_get(&e, x, FMT_ASYNC_AWAITER),
                                 event_table_get(&e, x, FMT_ASYNC_METHOD),
                                 event_table_get(&e, x, FMT_ASYNC_END),
                                 event_table_get(&e, x, FMT_ASYNC_SINCE),
                                 event_table_value(&e, x, FMT_ASYNC_PENDING),
                                 (int64_t)(zz >> 1) ^ -(int64_t)(zz & 1), SIZE_MAX, SIZE_MAX};
        at_time = x->time;
        map64_put(&by_id, ops[count].id, (uint32_t)count);
        count++;
    }
    for (size_t i = 0; i < count; i++) {
        uint32_t at;
        if (ops[i].awaiter && map64_get(&by_id, ops[i].awaiter, &at) && at != i)
            ops[i].parent = at;
    }
    /* the merged tree, root first: an op's line needs its awaiter's */
    struct tree t = {NULL, 0, 0, {0}};
    size_t chains = 0;
    for (int pass = 0, placed = 0; pass < 256 && placed < (int)count && !failed; pass++) {
        for (size_t i = 0; i < count; i++) {
            struct op *op = &ops[i];
            if (op->node != SIZE_MAX)
                continue;
            size_t parent_node = SIZE_MAX;
            if (op->parent != SIZE_MAX) {
                parent_node = ops[op->parent].node;
                if (parent_node == SIZE_MAX && pass < 255)
                    continue; /* its awaiter first */
            }
            op->node = node_for(&t, parent_node, op->method, op->state,
                               parent_node == SIZE_MAX ? op->end : 0);
            if (op->node == SIZE_MAX) {
                failed = 1;
                break;
            }
            struct node *n = &t.nodes[op->node];
            n->count++;
            if (op->pending >= n->oldest) {
                n->oldest = op->pending;
                n->before_first = op->since <= first_since;
            }
            chains += parent_node == SIZE_MAX;
            placed++;
        }
    }
    if (failed) {
        cli_error("out of memory while writing the async operations");
        mem_free(ops);
        mem_free(t.nodes);
        map64_free(&by_id);
        map64_free(&t.index);
        event_table_close(&e);
        return -1;
    }
    char when[32];
    event_table_duration_text(at_time, when, sizeof when);
    fprintf(out, "# pending async operations at %s (snapshot %" PRIu64 "): %zu in %zu chains\n",
            when, last, count, chains);
    fputs("# ops: operations on that line; pending: the oldest one's time at that await\n"
          "# (>= : already there at the first snapshot, so longer)\n", out);
    fprintf(out, "%6s  %-14s  %s\n", "ops", "pending", "method (await)");
    /* children lists, each sorted by count */
    size_t *first = mem_alloc((t.count + 1) * sizeof *first);
    size_t *next = mem_alloc((t.count + 1) * sizeof *next);
    size_t *sorted = mem_alloc((t.count + 1) * sizeof *sorted);
    size_t *tail_of = mem_alloc((t.count + 1) * sizeof *tail_of);
    if (!first || !next || !sorted || !tail_of) {
        mem_free(first);
        mem_free(next);
        mem_free(sorted);
        mem_free(tail_of);
        mem_free(ops);
        mem_free(t.nodes);
        map64_free(&by_id);
        map64_free(&t.index);
        event_table_close(&e);
        cli_error("out of memory while writing the async operations");
        return -1;
    }
    for (size_t i = 0; i < t.count; i++) {
        sorted[i] = i;
        first[i] = next[i] = tail_of[i] = SIZE_MAX;
    }
    qsort_r(sorted, t.count, sizeof *sorted, by_count, &t);
    size_t root_first = SIZE_MAX, root_tail = SIZE_MAX;
    for (size_t k = 0; k < t.count; k++) {
        size_t i = sorted[k];
        size_t par = t.nodes[i].parent;
        size_t *head = par == SIZE_MAX ? &root_first : &first[par];
        size_t *tail = par == SIZE_MAX ? &root_tail : &tail_of[par];
        if (*head == SIZE_MAX)
            *head = i;
        else
            next[*tail] = i;
        *tail = i;
    }
    struct printing pr = {&e, &t, out, first, next};
    long shown = 0;
    for (size_t r = root_first; r != SIZE_MAX; r = next[r]) {
        if (o->limit > 0 && shown++ >= o->limit) {
            fprintf(out, "# ... more chains (--limit 0 shows all)\n");
            break;
        }
        print_node(&pr, r, 0);
    }
    footer(p, o, out);
    mem_free(tail_of);
    mem_free(first);
    mem_free(next);
    mem_free(sorted);
    mem_free(ops);
    mem_free(t.nodes);
    map64_free(&by_id);
    map64_free(&t.index);
    event_table_close(&e);
    return 0;
}
