/*
 * out_lcov: an lcov tracefile (geninfo(1) "TRACEFILE FORMAT"): per source
 * file SF, its functions (FN, FNDA, FNF, FNH), its branches (BRDA: line,
 * block = the branch instruction's IL offset, branch = the path, taken or
 * "-" when the line never ran; BRF, BRH), its lines (DA, LF, LH),
 * end_of_record.
 */
#include "cli/cover_out.h"

static void function_name(FILE *out, const struct covdata *d, const struct covdata_method *m)
{
    fprintf(out, "%s.%s", d->classes[m->klass].name, m->name);
}

int cover_write_lcov(const struct covdata *d, FILE *out)
{
    for (uint32_t fi = 0; fi < d->file_count; fi++) {
        const struct covdata_file *f = &d->files[fi];
        fprintf(out, "TN:\nSF:%s\n", f->path);
        uint32_t fnf = 0, fnh = 0;
        for (uint32_t m = 0; m < d->method_count; m++) {
            const struct covdata_method *dm = &d->methods[m];
            if (d->classes[dm->klass].file != fi || !dm->counts.lines)
                continue;
            fprintf(out, "FN:%u,", dm->first_line);
            function_name(out, d, dm);
            fputc('\n', out);
        }
        for (uint32_t m = 0; m < d->method_count; m++) {
            const struct covdata_method *dm = &d->methods[m];
            if (d->classes[dm->klass].file != fi || !dm->counts.lines)
                continue;
            /* the hits of its first line stand for its calls */
            uint64_t calls = 0;
            for (uint32_t i = 0; i < f->line_count; i++)
                if (f->lines[i].method == m) {
                    calls = f->lines[i].hits;
                    break;
                }
            fprintf(out, "FNDA:%llu,", (unsigned long long)(dm->counts.lines_covered ? (calls ? calls : 1) : 0));
            function_name(out, d, dm);
            fputc('\n', out);
            fnf++;
            fnh += dm->counts.lines_covered > 0;
        }
        fprintf(out, "FNF:%u\nFNH:%u\n", fnf, fnh);
        for (uint32_t i = 0, k = 0; i < f->branch_count; i++) {
            const struct covdata_branch *b = &f->branches[i];
            while (k < f->line_count && f->lines[k].line < b->line)
                k++;
            int line_ran = k < f->line_count && f->lines[k].line == b->line && f->lines[k].hits > 0;
            if (line_ran || b->hits)
                fprintf(out, "BRDA:%u,%u,%u,%llu\n", b->line, b->il_offset, b->path,
                        (unsigned long long)b->hits);
            else
                fprintf(out, "BRDA:%u,%u,%u,-\n", b->line, b->il_offset, b->path);
        }
        fprintf(out, "BRF:%u\nBRH:%u\n", f->counts.branches, f->counts.branches_covered);
        for (uint32_t i = 0; i < f->line_count; i++)
            fprintf(out, "DA:%u,%llu\n", f->lines[i].line, (unsigned long long)f->lines[i].hits);
        fprintf(out, "LF:%u\nLH:%u\nend_of_record\n", f->counts.lines, f->counts.lines_covered);
    }
    return ferror(out) ? -1 : 0;
}
