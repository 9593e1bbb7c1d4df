/*
 * out_exceptions: `report -f exceptions`: every throw of a recording made
 * with -e exceptions, counted exactly: how many, new or rethrown, how they
 * ended; then by type, by throw site (the method that threw: the leaf of
 * the throwing stack) and by catch site (the catching method, or how the
 * exception ended when nothing caught it).
 */
#include <string.h>

#include "cli/cli.h"
#include "cli/evtable.h"

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
    struct evt e;
    if (evt_open(&e, p, o, "exceptions") < 0) {
        cli_error("out of memory while writing the exceptions table");
        return -1;
    }
    if (e.event < 0) {
        fputs("# no exceptions in this recording (record with -e exceptions)\n", out);
        evt_close(&e);
        return 0;
    }
    long f_type = evt_field(&e, "type"), f_rethrow = evt_field(&e, "rethrow");
    long f_outcome = evt_field(&e, "outcome"), f_catch = evt_field(&e, "catch");
    long f_filter = evt_field(&e, "by_filter"), f_filters = evt_field(&e, "filters");
    long f_length = evt_field(&e, "message_length");
    uint64_t with_message = 0, message_chars = 0, longest = 0;
    struct evt_rows types, sites, catches;
    evt_rows_init(&types);
    evt_rows_init(&sites);
    evt_rows_init(&catches);
    uint64_t total = 0, rethrown = 0, by_filter = 0, filters_run = 0;
    uint64_t outcomes[OUTCOMES] = {0};
    for (const struct rec_record *x = evt_next(&e, NULL); x; x = evt_next(&e, x)) {
        uint64_t type = evt_get(&e, x, f_type), again = evt_get(&e, x, f_rethrow) != 0;
        uint64_t outcome = evt_get(&e, x, f_outcome);
        if (outcome >= OUTCOMES)
            outcome = 0;
        total++;
        rethrown += again;
        outcomes[outcome]++;
        filters_run += evt_get(&e, x, f_filters);
        if (f_length >= 0) {
            uint64_t z = evt_get(&e, x, f_length);
            int64_t length = (int64_t)(z >> 1) ^ -(int64_t)(z & 1); /* zigzag */
            if (length > 0) {
                with_message++;
                message_chars += (uint64_t)length;
                if ((uint64_t)length > longest)
                    longest = (uint64_t)length;
            }
        }
        int filtered = outcome == 1 && evt_get(&e, x, f_filter);
        by_filter += (uint64_t)filtered;
        struct evt_row *t = evt_row(&types, type);
        if (t) {
            t->count++;
            t->a += again;
            t->b += outcome == 1;
        }
        /* a site: the throwing method and the type, so a method that
         * throws two types has two rows */
        uint32_t site = evt_site(&e, x->stack);
        struct evt_row *s = evt_row(&sites, (uint64_t)site << 32 | (type & 0xffffffff));
        if (s) {
            s->count++;
            s->a += again;
        }
        uint64_t catcher = outcome == 1 ? evt_get(&e, x, f_catch) : 0;
        /* caught: by the catching method; else by how it ended */
        struct evt_row *c = evt_row(&catches, catcher ? catcher << 8 : outcome);
        if (c) {
            c->count++;
            c->a += (uint64_t)filtered;
        }
    }
    if (types.failed || sites.failed || catches.failed) {
        cli_error("out of memory while writing the exceptions table");
        evt_rows_free(&types);
        evt_rows_free(&sites);
        evt_rows_free(&catches);
        evt_close(&e);
        return -1;
    }
    char span[32], name[512];
    evt_duration_text(evt_duration(p->rec), span, sizeof span);
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

    evt_rows_sort(&types, 0);
    fprintf(out, "\nby type\n%10s %10s %10s  %s\n", "thrown", "rethrown", "caught", "type");
    for (size_t i = 0; i < evt_limit(&e, types.count); i++) {
        const struct evt_row *r = &types.rows[i];
        fprintf(out, "%10llu %10llu %10llu  %s\n", (unsigned long long)r->count,
                (unsigned long long)r->a, (unsigned long long)r->b,
                evt_string(&e, r->key, name, sizeof name));
    }
    evt_rows_sort(&sites, 0);
    fprintf(out, "\nby throw site\n%10s %10s  %s\n", "thrown", "rethrown", "method (type)");
    for (size_t i = 0; i < evt_limit(&e, sites.count); i++) {
        const struct evt_row *r = &sites.rows[i];
        char type[256];
        fprintf(out, "%10llu %10llu  %s (%s)\n", (unsigned long long)r->count,
                (unsigned long long)r->a, evt_frame_name(&e, r->key >> 32),
                evt_string(&e, r->key & 0xffffffff, type, sizeof type));
    }
    evt_rows_sort(&catches, 0);
    fprintf(out, "\nby catch site\n%10s %10s  %s\n", "caught", "by filter", "method");
    for (size_t i = 0; i < evt_limit(&e, catches.count); i++) {
        const struct evt_row *r = &catches.rows[i];
        fprintf(out, "%10llu %10llu  %s\n", (unsigned long long)r->count,
                (unsigned long long)r->a,
                r->key >> 8 ? evt_frame_name(&e, r->key >> 8) : outcome_short(r->key));
    }
    evt_rows_free(&types);
    evt_rows_free(&sites);
    evt_rows_free(&catches);
    evt_close(&e);
    return 0;
}
