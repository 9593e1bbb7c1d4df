/*
 * out_exceptions: `report -f exceptions`: every throw of a recording made
 * with -e exceptions, counted exactly: how many, new or rethrown, how they
 * ended; then by type, by throw site (the method that threw: the leaf of
 * the throwing stack) and by catch site (the catching method, or how the
 * exception ended when nothing caught it).
 */
#include <string.h>

#include "cli/cli.h"
#include "cli/event_table.h"

/* Outcomes as the agent records them (src/agent/sources/exflow.h). */
static const char *const outcome_words[] = {
    "unknown (in flight at the end, or not followed)",
    "caught",
    "unhandled",
    "swallowed by a filter (thrown inside a `when` filter)",
    "replaced (another exception left the finally block it ran)",
    "caught by the runtime (where it called managed code)",
};
#define OUTCOMES (sizeof outcome_words / sizeof outcome_words[0])

static const char *outcome_short(uint64_t outcome)
{
    static const char *const words[] = {"[unknown]", NULL, "[unhandled]", "[filter swallowed it]",
                                        "[replaced]", "[caught by the runtime]"};
    return outcome < OUTCOMES && words[outcome] ? words[outcome] : "[unknown]";
}

int report_exceptions(const struct profile *p, const struct report_options *o, FILE *out)
{
    struct event_table e;
    if (event_table_open(&e, p, o, FMT_EV_EXCEPTIONS) < 0) {
        cli_error("out of memory while writing the exceptions table");
        return -1;
    }
    if (e.event < 0) {
        fputs("# no exceptions in this recording (record with -e exceptions)\n", out);
        event_table_close(&e);
        return 0;
    }
    uint64_t with_message = 0, message_chars = 0, longest = 0;
    struct event_table_rows types, sites, catches;
    event_table_rows_init(&types);
    event_table_rows_init(&sites);
    event_table_rows_init(&catches);
    uint64_t total = 0, rethrown = 0, by_filter = 0, filters_run = 0;
    uint64_t outcomes[OUTCOMES] = {0};
    for (const struct rec_record *x = event_table_next(&e, NULL); x; x = event_table_next(&e, x)) {
        uint64_t type = event_table_get(&e, x, FMT_EXCEPTIONS_TYPE);
        uint64_t again = event_table_get(&e, x, FMT_EXCEPTIONS_RETHROW) != 0;
        uint64_t outcome = event_table_get(&e, x, FMT_EXCEPTIONS_OUTCOME);
        if (outcome >= OUTCOMES)
            outcome = 0;
        total++;
        rethrown += again;
        outcomes[outcome]++;
        filters_run += event_table_get(&e, x, FMT_EXCEPTIONS_FILTERS);
        uint64_t z = event_table_get(&e, x, FMT_EXCEPTIONS_MESSAGE_LENGTH);
        int64_t length = (int64_t)(z >> 1) ^ -(int64_t)(z & 1); /* zigzag; 0 when absent */
        if (length > 0) {
            with_message++;
            message_chars += (uint64_t)length;
            if ((uint64_t)length > longest)
                longest = (uint64_t)length;
        }
        int filtered = outcome == 1 && event_table_get(&e, x, FMT_EXCEPTIONS_BY_FILTER);
        by_filter += (uint64_t)filtered;
        struct event_table_row *t = event_table_row(&types, type);
        if (t) {
            t->count++;
            t->a += again;
            t->b += outcome == 1;
        }
        /* a site: the throwing method and the type, so a method that
         * throws two types has two rows */
        uint32_t site = event_table_site(&e, x->stack);
        struct event_table_row *s =
            event_table_row(&sites, (uint64_t)site << 32 | (type & 0xffffffff));
        if (s) {
            s->count++;
            s->a += again;
        }
        uint64_t catcher = outcome == 1 ? event_table_get(&e, x, FMT_EXCEPTIONS_CATCH) : 0;
        /* caught: by the catching method; else by how it ended */
        struct event_table_row *c = event_table_row(&catches, catcher ? catcher << 8 : outcome);
        if (c) {
            c->count++;
            c->a += (uint64_t)filtered;
        }
    }
    if (types.failed || sites.failed || catches.failed) {
        cli_error("out of memory while writing the exceptions table");
        event_table_rows_free(&types);
        event_table_rows_free(&sites);
        event_table_rows_free(&catches);
        event_table_close(&e);
        return -1;
    }
    char span[32], name[512];
    event_table_duration_text(event_table_duration(p->rec), span, sizeof span);
    fprintf(out, "# exceptions: %llu thrown (%llu new, %llu rethrown) in %s\n",
            (unsigned long long)total, (unsigned long long)(total - rethrown),
            (unsigned long long)rethrown, span);
    for (size_t i = 1; i < OUTCOMES; i++)
        if (outcomes[i])
            fprintf(out, "#   %llu %s%s\n", (unsigned long long)outcomes[i], outcome_words[i],
                    i == 1 && by_filter ? "" : "");
    if (by_filter)
        fprintf(out, "#   %llu of the caught chosen by a filter (`catch ... when`)\n",
                (unsigned long long)by_filter);
    if (filters_run)
        fprintf(out, "#   %llu filters ran while searching for a catcher\n",
                (unsigned long long)filters_run);
    if (outcomes[0])
        fprintf(out, "#   %llu %s\n", (unsigned long long)outcomes[0], outcome_words[0]);
    if (with_message)
        fprintf(out, "#   messages: %llu with one, %.0f characters on average, %llu the longest "
                     "(their text is not recorded)\n",
                (unsigned long long)with_message, (double)message_chars / (double)with_message,
                (unsigned long long)longest);

    event_table_rows_sort(&types, 0);
    fprintf(out, "\nby type\n%10s %10s %10s  %s\n", "thrown", "rethrown", "caught", "type");
    for (size_t i = 0; i < event_table_limit(&e, types.count); i++) {
        const struct event_table_row *r = &types.rows[i];
        fprintf(out, "%10llu %10llu %10llu  %s\n", (unsigned long long)r->count,
                (unsigned long long)r->a, (unsigned long long)r->b,
                event_table_string(&e, r->key, name, sizeof name));
    }
    event_table_rows_sort(&sites, 0);
    fprintf(out, "\nby throw site\n%10s %10s  %s\n", "thrown", "rethrown", "method (type)");
    for (size_t i = 0; i < event_table_limit(&e, sites.count); i++) {
        const struct event_table_row *r = &sites.rows[i];
        char type[256];
        fprintf(out, "%10llu %10llu  %s (%s)\n", (unsigned long long)r->count,
                (unsigned long long)r->a, event_table_frame_name(&e, r->key >> 32),
                event_table_string(&e, r->key & 0xffffffff, type, sizeof type));
    }
    event_table_rows_sort(&catches, 0);
    fprintf(out, "\nby catch site\n%10s %10s  %s\n", "caught", "by filter", "method");
    for (size_t i = 0; i < event_table_limit(&e, catches.count); i++) {
        const struct event_table_row *r = &catches.rows[i];
        fprintf(out, "%10llu %10llu  %s\n", (unsigned long long)r->count,
                (unsigned long long)r->a,
                r->key >> 8 ? event_table_frame_name(&e, r->key >> 8) : outcome_short(r->key));
    }
    event_table_rows_free(&types);
    event_table_rows_free(&sites);
    event_table_rows_free(&catches);
    event_table_close(&e);
    return 0;
}
