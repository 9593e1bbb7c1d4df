/*
 * out_cobertura: Cobertura XML, as coverlet writes it (the layout
 * ReportGenerator and CI systems read): <coverage> with the totals,
 * <sources> (the directory the files share), then a <package> per
 * assembly, a <class> per type and file, its <methods> each with their
 * <lines>, and the class's <lines>.  A line with branches says
 * condition-coverage="50% (1/2)" and has a <condition> per branch
 * instruction.
 */
#include <string.h>
#include <time.h>

#include "cli/cover_out.h"

void cover_markup_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default:
            if ((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n')
                fputc('?', out);
            else
                fputc(*s, out);
        }
    }
}

void cover_common_dir(const struct covdata *d, char *out, size_t size)
{
    size_t len = 0;
    int first = 1;
    out[0] = '\0';
    for (uint32_t i = 0; i < d->file_count; i++) {
        const char *p = d->files[i].path;
        if (p[0] != '/')
            continue;
        const char *slash = strrchr(p, '/');
        size_t dir = (size_t)(slash - p) + 1;
        if (first) {
            len = dir < size ? dir : size - 1;
            memcpy(out, p, len);
            out[len] = '\0';
            first = 0;
            continue;
        }
        size_t k = 0;
        while (k < len && k < dir && out[k] == p[k])
            k++;
        while (k > 0 && out[k - 1] != '/')
            k--;
        len = k;
        out[len] = '\0';
    }
}

static double rate(uint32_t covered, uint32_t total)
{
    return total ? (double)covered / total : 1.0;
}

static void line_element(FILE *out, const struct covdata *d, const struct covdata_file *f,
                         const struct covdata_line *ln, const char *indent)
{
    fprintf(out, "%s<line number=\"%u\" hits=\"%llu\" branch=\"%s\"", indent, ln->line,
            (unsigned long long)ln->hits, ln->branches ? "True" : "False");
    (void)d;
    if (!ln->branches) {
        fputs(" />\n", out);
        return;
    }
    fprintf(out, " condition-coverage=\"%u%% (%u/%u)\">\n%s  <conditions>\n",
            (unsigned)(100.0 * ln->branches_covered / ln->branches), ln->branches_covered,
            ln->branches, indent);
    /* one condition per branch instruction on the line */
    for (uint32_t i = 0; i < f->branch_count; i++) {
        const struct covdata_branch *b = &f->branches[i];
        if (b->line != ln->line || (i && f->branches[i - 1].line == b->line &&
                                    f->branches[i - 1].method == b->method &&
                                    f->branches[i - 1].il_offset == b->il_offset))
            continue;
        uint32_t n = 0, hit = 0;
        for (uint32_t k = i; k < f->branch_count && f->branches[k].line == b->line &&
                             f->branches[k].method == b->method &&
                             f->branches[k].il_offset == b->il_offset;
             k++) {
            n++;
            hit += f->branches[k].hits > 0;
        }
        fprintf(out, "%s    <condition number=\"%u\" type=\"%s\" coverage=\"%u%%\" />\n", indent,
                b->il_offset, n > 2 ? "switch" : "jump", (unsigned)(100.0 * hit / n));
    }
    fprintf(out, "%s  </conditions>\n%s</line>\n", indent, indent);
}

int cover_write_cobertura(const struct covdata *d, FILE *out)
{
    char root[4096];
    cover_common_dir(d, root, sizeof root);
    fprintf(out, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
    fprintf(out,
            "<coverage line-rate=\"%.4f\" branch-rate=\"%.4f\" version=\"1.9\" timestamp=\"%lld\" "
            "lines-covered=\"%u\" lines-valid=\"%u\" branches-covered=\"%u\" branches-valid=\"%u\">\n",
            rate(d->total.lines_covered, d->total.lines),
            rate(d->total.branches_covered, d->total.branches), (long long)time(NULL),
            d->total.lines_covered, d->total.lines, d->total.branches_covered, d->total.branches);
    fputs("  <sources>\n", out);
    if (root[0]) {
        fputs("    <source>", out);
        cover_markup_text(out, root);
        fputs("</source>\n", out);
    }
    fputs("  </sources>\n  <packages>\n", out);
    for (uint32_t a = 0; a < d->assembly_count; a++) {
        const struct covdata_assembly *da = &d->assemblies[a];
        if (da->state != 0 && da->state != 1)
            continue;
        fputs("    <package name=\"", out);
        cover_markup_text(out, da->name);
        fprintf(out, "\" line-rate=\"%.4f\" branch-rate=\"%.4f\" complexity=\"0\">\n      <classes>\n",
                rate(da->counts.lines_covered, da->counts.lines),
                rate(da->counts.branches_covered, da->counts.branches));
        for (uint32_t c = 0; c < d->class_count; c++) {
            const struct covdata_class *dc = &d->classes[c];
            if (dc->assembly != a || dc->file >= d->file_count)
                continue;
            const struct covdata_file *f = &d->files[dc->file];
            const char *rel = strncmp(f->path, root, strlen(root)) == 0 ? f->path + strlen(root) : f->path;
            fputs("        <class name=\"", out);
            cover_markup_text(out, dc->name);
            fputs("\" filename=\"", out);
            cover_markup_text(out, rel);
            fprintf(out, "\" line-rate=\"%.4f\" branch-rate=\"%.4f\" complexity=\"0\">\n          <methods>\n",
                    rate(dc->counts.lines_covered, dc->counts.lines),
                    rate(dc->counts.branches_covered, dc->counts.branches));
            for (uint32_t m = 0; m < d->method_count; m++) {
                const struct covdata_method *dm = &d->methods[m];
                if (dm->klass != c || !dm->counts.lines)
                    continue;
                fputs("            <method name=\"", out);
                cover_markup_text(out, dm->name);
                fputs("\" signature=\"", out);
                cover_markup_text(out, dm->signature);
                fprintf(out, "\" line-rate=\"%.4f\" branch-rate=\"%.4f\" complexity=\"0\">\n              <lines>\n",
                        rate(dm->counts.lines_covered, dm->counts.lines),
                        rate(dm->counts.branches_covered, dm->counts.branches));
                for (uint32_t i = 0; i < f->line_count; i++)
                    if (f->lines[i].method == m)
                        line_element(out, d, f, &f->lines[i], "                ");
                fputs("              </lines>\n            </method>\n", out);
            }
            fputs("          </methods>\n          <lines>\n", out);
            for (uint32_t i = 0; i < f->line_count; i++)
                if (f->lines[i].method < d->method_count && d->methods[f->lines[i].method].klass == c)
                    line_element(out, d, f, &f->lines[i], "            ");
            fputs("          </lines>\n        </class>\n", out);
        }
        fputs("      </classes>\n    </package>\n", out);
    }
    fputs("  </packages>\n</coverage>\n", out);
    return ferror(out) ? -1 : 0;
}
