/*
 * out_locks: `report -f locks`: the contended lock waits of a recording
 * made with -e lock: how many and how long in all, then by waiting stack
 * (the code that waited), by owner (the thread that held the lock, when
 * the runtime said it: .NET 8 and later) and by lock.  Waits under
 * --lock-min were only counted by the agent: they appear in the totals.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/event_table.h"

static void print_rows(const struct event_table *e, const struct event_table_rows *t, FILE *out,
                       int what)
{
    for (size_t i = 0; i < event_table_limit(e, t->count); i++) {
        const struct event_table_row *r = &t->rows[i];
        char waited[32], longest[32], text[1024];
        event_table_duration_text(r->sum, waited, sizeof waited);
        event_table_duration_text(r->max, longest, sizeof longest);
        if (what == 0)
            event_table_stack_text(e, (uint32_t)r->key, 6, text, sizeof text);
        else if (what == 1)
            event_table_thread_id_name(e, r->key, text, sizeof text);
        else
            snprintf(text, sizeof text, "0x%llx", (unsigned long long)r->key);
        fprintf(out, "%12s %8llu %12s  %s\n", waited, (unsigned long long)r->count, longest, text);
    }
}

int report_locks(const struct profile *p, const struct report_options *o, FILE *out)
{
    struct event_table e;
    if (event_table_open(&e, p, o, FMT_EV_LOCK) < 0) {
        cli_error("out of memory while writing the locks table");
        return -1;
    }
    if (e.event < 0) {
        fputs("# no lock waits in this recording (record with -e lock)\n", out);
        event_table_close(&e);
        return 0;
    }
    struct event_table_rows stacks, owners, locks;
    event_table_rows_init(&stacks);
    event_table_rows_init(&owners);
    event_table_rows_init(&locks);
    uint64_t waits = 0, waited = 0, short_waits = 0, short_waited = 0, unknown_owner = 0;
    for (const struct rec_record *x = event_table_next(&e, NULL); x; x = event_table_next(&e, x)) {
        uint64_t ns = event_table_value(&e, x, FMT_LOCK_WAIT);
        uint64_t n = event_table_value(&e, x, FMT_LOCK_WAITS);
        if (event_table_get(&e, x, FMT_LOCK_BELOW_MIN)) {
            short_waits += n;
            short_waited += ns;
            continue;
        }
        waits++;
        waited += ns;
        uint64_t owner = event_table_get(&e, x, FMT_LOCK_OWNER);
        unknown_owner += owner == 0;
        struct event_table_row *rows[3] = {
            event_table_row(&stacks, x->stack), event_table_row(&owners, owner),
            event_table_row(&locks, event_table_get(&e, x, FMT_LOCK_LOCK))};
        for (int k = 0; k < 3; k++) {
            if (!rows[k])
                continue;
            rows[k]->count++;
            rows[k]->sum += ns;
            if (ns > rows[k]->max)
                rows[k]->max = ns;
        }
    }
    int rc = 0;
    if (stacks.failed || owners.failed || locks.failed) {
        cli_error("out of memory while writing the locks table");
        rc = -1;
        goto out;
    }
    char total[32], span[32], min[32] = "";
    event_table_duration_text(waited, total, sizeof total);
    event_table_duration_text(event_table_duration(p->rec), span, sizeof span);
    const struct rec_str *min_info = rec_info(p->rec, FMT_INFO_LOCK_MIN_NS);
    if (min_info) {
        char digits[32];
        snprintf(digits, sizeof digits, "%.*s", (int)min_info->len, min_info->p);
        event_table_duration_text(strtoull(digits, NULL, 10), min, sizeof min);
    }
    fprintf(out, "# lock contention: %llu waits%s%s, %s waited in all, in %s\n",
            (unsigned long long)waits, min[0] ? " of at least " : "", min, total, span);
    if (short_waits) {
        char shorter[32];
        event_table_duration_text(short_waited, shorter, sizeof shorter);
        fprintf(out, "#   and %llu shorter waits, %s in all (counted, not recorded one by one)\n",
                (unsigned long long)short_waits, shorter);
    }
    if (unknown_owner)
        fprintf(out, "#   %llu waits whose owner the runtime did not say (it says it from .NET 8 "
                "on, when it knows)\n", (unsigned long long)unknown_owner);
    event_table_rows_sort(&stacks, 1);
    fprintf(out, "\nby waiting stack (leaf < callers)\n%12s %8s %12s  %s\n", "waited", "waits",
            "longest", "stack");
    print_rows(&e, &stacks, out, 0);
    event_table_rows_sort(&owners, 1);
    fprintf(out, "\nby owner (the thread that held the lock)\n%12s %8s %12s  %s\n", "waited",
            "waits", "longest", "owner");
    print_rows(&e, &owners, out, 1);
    event_table_rows_sort(&locks, 1);
    fprintf(out, "\nby lock (the runtime's id)\n%12s %8s %12s  %s\n", "waited", "waits",
            "longest", "lock");
    print_rows(&e, &locks, out, 2);
out:
    event_table_rows_free(&stacks);
    event_table_rows_free(&owners);
    event_table_rows_free(&locks);
    event_table_close(&e);
    return rc;
}
