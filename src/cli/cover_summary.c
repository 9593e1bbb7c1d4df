/*
 * cover_summary: the formats of `corscope cover` by extension, and the
 * table printed at the end of a run (per assembly: line, branch and method
 * coverage, as coverage tools print it), with what was left out.
 */
#include <string.h>

#include "cli/cover_out.h"
#include "format/covfile.h"

static const struct cover_format formats[] = {
    {"cobertura", ".xml", cover_write_cobertura},
    {"lcov", ".info", cover_write_lcov},
    {"html", ".html", cover_write_html},
    {"json", ".json", cover_write_json},
};

const struct cover_format *cover_format_for(const char *path)
{
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        size_t e = strlen(formats[i].extension);
        if (n > e && !strcmp(path + n - e, formats[i].extension))
            return &formats[i];
    }
    return NULL;
}

const char *cover_format_list(void)
{
    return "cobertura (.xml), lcov (.info), html (.html), json (.json)";
}

static void rule(FILE *out, int width)
{
    fputc('+', out);
    for (int i = 0; i < width + 2; i++)
        fputc('-', out);
    fputs("+---------+---------+---------+\n", out);
}

static void row(FILE *out, int width, const char *name, const struct covdata_counts *c)
{
    char l[16], b[16], m[16];
    covdata_percent(c->lines_covered, c->lines, l, sizeof l);
    covdata_percent(c->branches_covered, c->branches, b, sizeof b);
    covdata_percent(c->methods_covered, c->methods, m, sizeof m);
    fprintf(out, "| %-*s | %6s%s | %6s%s | %6s%s |\n", width, name, l, c->lines ? "%" : " ", b,
            c->branches ? "%" : " ", m, c->methods ? "%" : " ");
}

void cover_write_summary(const struct covdata *d, FILE *out)
{
    int width = 8;
    for (uint32_t a = 0; a < d->assembly_count; a++) {
        int n = (int)strlen(d->assemblies[a].name);
        if (n > width && d->assemblies[a].state <= 1)
            width = n > 60 ? 60 : n;
    }
    rule(out, width);
    fprintf(out, "| %-*s |  Line   | Branch  | Method  |\n", width, "Assembly");
    rule(out, width);
    int any = 0;
    for (uint32_t a = 0; a < d->assembly_count; a++) {
        const struct covdata_assembly *da = &d->assemblies[a];
        if (da->state > 1)
            continue;
        row(out, width, da->name, &da->counts);
        any = 1;
    }
    if (any)
        rule(out, width);
    row(out, width, "Total", &d->total);
    rule(out, width);
    /* assemblies without a PDB: one line (third-party libraries beside
     * the application); other notes one each */
    uint32_t no_pdb = 0;
    for (uint32_t a = 0; a < d->assembly_count; a++) {
        const struct covdata_assembly *da = &d->assemblies[a];
        if (da->state == COVFILE_NO_PDB && da->note && !strcmp(da->note, "no PDB")) {
            fprintf(out, "%s%s", no_pdb++ ? ", " : "not covered, no PDB: ", da->name);
            continue;
        }
    }
    if (no_pdb)
        fprintf(out, " (--include NAME counts their methods' calls)\n");
    for (uint32_t a = 0; a < d->assembly_count; a++) {
        const struct covdata_assembly *da = &d->assemblies[a];
        if (da->note && !(da->state == COVFILE_NO_PDB && !strcmp(da->note, "no PDB")))
            fprintf(out, "%s: %s%s\n", da->name, da->state > 1 ? "not covered: " : "", da->note);
    }
    if (d->skipped_count)
        fprintf(out, "%u method%s left uninstrumented (listed in the HTML and JSON reports)%s%s\n",
                d->skipped_count, d->skipped_count == 1 ? "" : "s",
                d->skipped_count ? ": " : "", d->skipped_count ? d->skipped[0].why : "");
    if (d->full_methods)
        fprintf(out, "%llu methods not instrumented: a counter file was full\n",
                (unsigned long long)d->full_methods);
    if (d->damaged)
        fprintf(out, "%u counter file%s damaged (what was whole is counted)\n", d->damaged,
                d->damaged == 1 ? "" : "s");
}
