/*
 * out_coverage_html: the coverage report as one HTML page that needs no
 * network: the totals, a table per assembly, class and file, what was left
 * out and why, and each source file with its lines marked -- covered
 * (green, with the hits), not covered (red), branches partly taken
 * (yellow, "1/2" in the margin) -- read from the disk at report time (a
 * file no longer there is listed by its lines alone).  A few lines of
 * script show one file at a time.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cover_out.h"
#include "common/mem.h"

static const char style[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#222}"
    "header{background:#24323f;color:#fff;padding:12px 20px}"
    "header h1{font-size:18px;margin:0 0 4px}main{padding:12px 20px}"
    "table{border-collapse:collapse;margin:8px 0 16px}"
    "th,td{padding:3px 10px;border-bottom:1px solid #ddd;text-align:right}"
    "th:first-child,td:first-child{text-align:left}th{background:#f3f3f3;cursor:pointer}"
    ".bar{display:inline-block;width:80px;height:9px;background:#e88;vertical-align:middle;margin-right:6px}"
    ".bar i{display:block;height:9px;background:#3a3}"
    "pre{margin:0;font:12px/1.45 ui-monospace,monospace}"
    ".src{border:1px solid #ccc;margin-bottom:24px}"
    ".src table{margin:0;width:100%}.src td{border:0;padding:0 8px;text-align:left;white-space:pre;"
    "font:12px/1.45 ui-monospace,monospace}"
    ".src td.n,.src td.h{text-align:right;color:#777;width:1%;user-select:none}"
    "tr.c td.t{background:#dff3df}tr.u td.t{background:#f8d6d6}tr.p td.t{background:#f9eebd}"
    "tr.c td.h{color:#2a7a2a}tr.u td.h{color:#b03030}tr.p td.h{color:#8a6d00}"
    "h2{font-size:16px;margin:20px 0 4px}h3{font-size:14px;margin:16px 0 4px;word-break:break-all}"
    ".note{color:#8a4b00}.file{display:none}.file.on{display:block}a{color:#1a5fb4}"
    ".b{font-size:10px;border:1px solid currentColor;border-radius:3px;padding:0 2px;margin-left:3px}";

static const char script[] =
    "function show(id){document.querySelectorAll('.file').forEach(function(e){"
    "e.classList.toggle('on',e.id===id)});var e=document.getElementById(id);"
    "if(e)e.scrollIntoView()}"
    "window.addEventListener('hashchange',function(){show(location.hash.slice(1))});"
    "if(location.hash)show(location.hash.slice(1));"
    "document.querySelectorAll('th').forEach(function(th){th.onclick=function(){"
    "var t=th.closest('table'),i=Array.prototype.indexOf.call(th.parentNode.children,th),"
    "rows=Array.prototype.slice.call(t.querySelectorAll('tr')).slice(1),"
    "d=th.dataset.d=th.dataset.d==='1'?'-1':'1';rows.sort(function(a,b){"
    "var x=a.children[i].dataset.v||a.children[i].textContent,y=b.children[i].dataset.v||b.children[i].textContent,"
    "nx=parseFloat(x),ny=parseFloat(y);return (isNaN(nx)||isNaN(ny)?x.localeCompare(y):nx-ny)*d});"
    "rows.forEach(function(r){t.appendChild(r)})}});";

static void percent_cell(FILE *out, uint32_t covered, uint32_t total)
{
    if (!total) {
        fputs("<td data-v=\"-1\">-</td>", out);
        return;
    }
    double p = 100.0 * covered / total;
    fprintf(out, "<td data-v=\"%.3f\"><span class=\"bar\"><i style=\"width:%.0f%%\"></i></span>%.1f%% "
                 "<small>(%u/%u)</small></td>",
            p, p, p, covered, total);
}

static void counts_cells(FILE *out, const struct covdata_counts *c)
{
    percent_cell(out, c->lines_covered, c->lines);
    percent_cell(out, c->branches_covered, c->branches);
    percent_cell(out, c->methods_covered, c->methods);
}

/* The source file's text, whole (mem_alloc'd), or NULL. */
static char *read_source(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 65536 > cap) {
            char *grown = mem_realloc(text, cap = n + 65536 + cap);
            if (!grown) {
                mem_free(text);
                fclose(f);
                return NULL;
            }
            text = grown;
        }
        size_t got = fread(text + n, 1, 65536, f);
        n += got;
        if (got == 0 || n > (64u << 20))
            break;
    }
    fclose(f);
    text[n] = '\0';
    *size = n;
    return text;
}

static void source_row(FILE *out, uint32_t number, const struct covdata_line *ln, const char *text,
                       size_t len)
{
    const char *cls = "";
    char hits[64] = "";
    if (ln) {
        cls = ln->hits == 0 ? " class=\"u\"" : ln->branches_covered < ln->branches ? " class=\"p\"" : " class=\"c\"";
        if (ln->branches)
            snprintf(hits, sizeof hits, "%llu <span class=\"b\" title=\"branches taken\">br %u/%u</span>",
                     (unsigned long long)ln->hits, ln->branches_covered, ln->branches);
        else
            snprintf(hits, sizeof hits, "%llu", (unsigned long long)ln->hits);
    }
    fprintf(out, "<tr%s><td class=\"n\">%u</td><td class=\"h\">%s</td><td class=\"t\">", cls, number,
            hits);
    char *line = mem_strndup(text ? text : "", text ? len : 0);
    if (line) {
        /* a CR before the newline dropped */
        size_t n = strlen(line);
        if (n && line[n - 1] == '\r')
            line[n - 1] = '\0';
        cover_markup_text(out, line);
        mem_free(line);
    }
    fputs("</td></tr>\n", out);
}

static void source_file(FILE *out, const struct covdata *d, uint32_t fi, const char *root)
{
    const struct covdata_file *f = &d->files[fi];
    const char *rel = strncmp(f->path, root, strlen(root)) == 0 ? f->path + strlen(root) : f->path;
    fprintf(out, "<section class=\"file\" id=\"f%u\"><h3>", fi);
    cover_markup_text(out, rel);
    fprintf(out, "</h3><p><a href=\"#top\">&uarr; summary</a> &middot; lines %u/%u, branches %u/%u",
            f->counts.lines_covered, f->counts.lines, f->counts.branches_covered, f->counts.branches);
    size_t size = 0;
    char *text = read_source(f->path, &size);
    if (!text)
        fputs(" <span class=\"note\">(the source is not on this machine: its lines alone)</span>", out);
    fputs("</p><div class=\"src\"><table>\n", out);
    if (text) {
        const char *p = text, *end = text + size;
        uint32_t number = 1, k = 0;
        while (p < end || number == 1) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
            while (k < f->line_count && f->lines[k].line < number)
                k++;
            const struct covdata_line *ln = k < f->line_count && f->lines[k].line == number ? &f->lines[k] : NULL;
            source_row(out, number, ln, p, len);
            number++;
            if (!nl)
                break;
            p = nl + 1;
        }
        mem_free(text);
    } else {
        for (uint32_t k = 0; k < f->line_count; k++)
            source_row(out, f->lines[k].line, &f->lines[k], NULL, 0);
    }
    fputs("</table></div></section>\n", out);
}

int cover_write_html(const struct covdata *d, FILE *out)
{
    char root[4096];
    cover_common_dir(d, root, sizeof root);
    time_t now = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&now));
    fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                 "<title>Coverage</title><style>%s</style></head><body>\n",
            style);
    fprintf(out, "<header id=\"top\"><h1>Coverage</h1>%s &middot; %u process%s &middot; lines %u/%u "
                 "&middot; branches %u/%u &middot; methods %u/%u</header><main>\n",
            when, d->processes, d->processes == 1 ? "" : "es", d->total.lines_covered,
            d->total.lines, d->total.branches_covered, d->total.branches,
            d->total.methods_covered, d->total.methods);

    fputs("<h2>Assemblies</h2><table><tr><th>Assembly</th><th>Lines</th><th>Branches</th>"
          "<th>Methods</th></tr>\n",
          out);
    for (uint32_t a = 0; a < d->assembly_count; a++) {
        const struct covdata_assembly *da = &d->assemblies[a];
        fputs("<tr><td>", out);
        cover_markup_text(out, da->name);
        if (da->note) {
            fputs(" <span class=\"note\">(", out);
            cover_markup_text(out, da->note);
            fputs(")</span>", out);
        }
        fputs("</td>", out);
        counts_cells(out, &da->counts);
        fputs("</tr>\n", out);
    }
    fputs("<tr><td><b>Total</b></td>", out);
    counts_cells(out, &d->total);
    fputs("</tr></table>\n", out);

    if (d->skipped_count) {
        fprintf(out, "<h2>Methods left uninstrumented (%u)</h2><table><tr><th>Method</th><th>Why</th></tr>\n",
                d->skipped_count);
        for (uint32_t i = 0; i < d->skipped_count; i++) {
            fputs("<tr><td>", out);
            cover_markup_text(out, d->skipped[i].method);
            fputs("</td><td style=\"text-align:left\">", out);
            cover_markup_text(out, d->skipped[i].why);
            fputs("</td></tr>\n", out);
        }
        fputs("</table>\n", out);
    }

    fputs("<h2>Files</h2><table><tr><th>File</th><th>Lines</th><th>Branches</th></tr>\n", out);
    for (uint32_t fi = 0; fi < d->file_count; fi++) {
        const struct covdata_file *f = &d->files[fi];
        const char *rel = strncmp(f->path, root, strlen(root)) == 0 ? f->path + strlen(root) : f->path;
        fprintf(out, "<tr><td><a href=\"#f%u\">", fi);
        cover_markup_text(out, rel);
        fputs("</a></td>", out);
        percent_cell(out, f->counts.lines_covered, f->counts.lines);
        percent_cell(out, f->counts.branches_covered, f->counts.branches);
        fputs("</tr>\n", out);
    }
    fputs("</table>\n<h2>Classes</h2><table><tr><th>Class</th><th>Lines</th><th>Branches</th>"
          "<th>Methods</th></tr>\n",
          out);
    for (uint32_t c = 0; c < d->class_count; c++) {
        const struct covdata_class *dc = &d->classes[c];
        if (!dc->counts.methods)
            continue;
        if (dc->file < d->file_count)
            fprintf(out, "<tr><td><a href=\"#f%u\">", dc->file);
        else
            fputs("<tr><td><a>", out);
        cover_markup_text(out, dc->name);
        fputs("</a></td>", out);
        counts_cells(out, &dc->counts);
        fputs("</tr>\n", out);
    }
    fputs("</table>\n<h2>Sources</h2><p>Choose a file or a class above.</p>\n", out);
    for (uint32_t fi = 0; fi < d->file_count; fi++)
        source_file(out, d, fi, root);
    fprintf(out, "</main><script>%s</script></body></html>\n", script);
    return ferror(out) ? -1 : 0;
}
