/*
 * covdata: see covdata.h.
 */
#include "cli/covdata.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/mem.h"
#include "common/pdb/assembly.h"
#include "format/covfile.h"

/* Makes room for one more element; 0, or -1 with the array unchanged. */
static int grow_array(void **arr, size_t count, size_t *cap, size_t elem)
{
    if (count < *cap)
        return 0;
    void *grown = mem_grow(*arr, cap, count + 1, elem);
    if (!grown)
        return -1;
    *arr = grown;
    return 0;
}
#define GROW(arr, count, cap) grow_array((void **)&(arr), (count), &(cap), sizeof *(arr))

/* One probe's count, merged over processes. */
struct probe_hit {
    uint32_t token, il_offset;
    uint16_t kind, path;
    uint64_t hits;
};

struct skip_work {
    uint32_t token;
    char *why;
};

/* An assembly (MVID) while the counter files are read. */
struct asm_work {
    uint8_t mvid[16];
    char *path, *name, *why;
    uint32_t state, pdb_state;
    struct probe_hit *hits;
    size_t hit_count, hit_cap;
    struct skip_work *skips;
    size_t skip_count, skip_cap;
};

struct loader {
    struct covdata *d;
    struct asm_work *work;
    size_t work_count, work_cap;
    size_t cap_assemblies, cap_files, cap_classes, cap_methods, cap_skipped;
    struct covplan_filters include, exclude;
};

void covdata_percent(uint32_t covered, uint32_t total, char *out, size_t size)
{
    if (!total)
        snprintf(out, size, "-");
    else
        snprintf(out, size, "%.1f", 100.0 * covered / total);
}

/* ---- reading the counter files ------------------------------------------------------ */

static struct asm_work *work_for(struct loader *l, const struct covfile_module_rec *m)
{
    for (size_t i = 0; i < l->work_count; i++)
        if (!memcmp(l->work[i].mvid, m->mvid, 16))
            return &l->work[i];
    if (GROW(l->work, l->work_count, l->work_cap) < 0)
        return NULL;
    struct asm_work *w = &l->work[l->work_count];
    memset(w, 0, sizeof *w);
    memcpy(w->mvid, m->mvid, 16);
    w->path = mem_strdup(m->path);
    w->name = mem_strdup(m->name);
    w->why = m->why[0] ? mem_strdup(m->why) : NULL;
    w->state = m->state;
    w->pdb_state = m->pdb_state;
    if (!w->path || !w->name)
        return NULL;
    l->work_count++;
    return w;
}

static int read_file(const char *path, uint8_t **data, size_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -1;
    }
    size_t n = (size_t)st.st_size;
    uint8_t *p = mem_alloc(n ? n : 1);
    size_t got = 0;
    while (p && got < n) {
        ssize_t r = read(fd, p + got, n - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (!p)
        return -1;
    *data = p;
    *size = got;
    return 0;
}

static int take_counters(struct loader *l, const char *path)
{
    uint8_t *data;
    size_t size;
    if (read_file(path, &data, &size) < 0) {
        l->d->damaged++;
        return 0;
    }
    struct covfile_view v;
    char why[160];
    if (covfile_read(data, size, &v, why, sizeof why) < 0) {
        mem_free(data);
        l->d->damaged++;
        return 0;
    }
    l->d->processes++;
    l->d->damaged += v.truncated;
    l->d->full_methods += v.header->full_methods;
    struct asm_work **by_index = mem_calloc(v.module_count + 1, sizeof *by_index);
    int rc = by_index ? 0 : -1;
    uint32_t max_index = 0;
    for (uint32_t i = 0; rc == 0 && i < v.module_count; i++)
        if (v.modules[i].index > max_index)
            max_index = v.modules[i].index;
    struct asm_work **index = rc == 0 ? mem_calloc((size_t)max_index + 1, sizeof *index) : NULL;
    if (!index)
        rc = -1;
    for (uint32_t i = 0; rc == 0 && i < v.module_count; i++) {
        struct asm_work *w = work_for(l, &v.modules[i]);
        if (!w)
            rc = -1;
        else
            index[v.modules[i].index] = w;
    }
    for (uint32_t i = 0; rc == 0 && i < v.method_count; i++) {
        const struct covfile_method_rec *m = &v.methods[i];
        struct asm_work *w = m->module <= max_index ? index[m->module] : NULL;
        if (!w)
            continue;
        for (uint32_t k = 0; rc == 0 && k < m->count; k++) {
            if (GROW(w->hits, w->hit_count, w->hit_cap) < 0) {
                rc = -1;
                break;
            }
            struct covfile_probe_desc pd;
            uint64_t hits;
            memcpy(&pd, &m->probes[k], sizeof pd);
            memcpy(&hits, &m->counters[k], sizeof hits);
            w->hits[w->hit_count++] =
                (struct probe_hit){m->token, pd.il_offset, pd.kind, pd.path, hits};
        }
    }
    for (uint32_t i = 0; rc == 0 && i < v.skipped_count; i++) {
        const struct covfile_skipped_rec *s = &v.skipped[i];
        struct asm_work *w = s->module <= max_index ? index[s->module] : NULL;
        if (!w)
            continue;
        if (GROW(w->skips, w->skip_count, w->skip_cap) < 0 || !(w->skips[w->skip_count].why = mem_strdup(s->why))) {
            rc = -1;
            break;
        }
        w->skips[w->skip_count++].token = s->token;
    }
    mem_free(index);
    mem_free(by_index);
    covfile_view_free(&v);
    mem_free(data);
    return rc;
}

static int cmp_hit(const void *x, const void *y)
{
    const struct probe_hit *a = x, *b = y;
    if (a->token != b->token)
        return a->token < b->token ? -1 : 1;
    if (a->il_offset != b->il_offset)
        return a->il_offset < b->il_offset ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    return a->path < b->path ? -1 : a->path > b->path;
}

/* Sorts and sums the same probe from several processes. */
static void merge_hits(struct asm_work *w)
{
    if (w->hit_count > 1)
        qsort(w->hits, w->hit_count, sizeof *w->hits, cmp_hit);
    size_t out = 0;
    for (size_t i = 0; i < w->hit_count; i++) {
        if (out && !cmp_hit(&w->hits[out - 1], &w->hits[i]))
            w->hits[out - 1].hits += w->hits[i].hits;
        else
            w->hits[out++] = w->hits[i];
    }
    w->hit_count = out;
}

/* The merged hits of a probe; *seen whether the method ran anywhere. */
static uint64_t hits_of(const struct asm_work *w, uint32_t token, const struct covplan_probe *p,
                        int *seen)
{
    struct probe_hit key = {token, p->il_offset, p->kind, p->path, 0};
    size_t lo = 0, hi = w->hit_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_hit(&w->hits[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < w->hit_count && w->hits[lo].token == token)
        *seen = 1;
    return lo < w->hit_count && !cmp_hit(&w->hits[lo], &key) ? w->hits[lo].hits : 0;
}

/* ---- one assembly --------------------------------------------------------------------- */

/* A line probe's contribution, before the nesting rule. */
struct candidate {
    uint32_t start, end;
    uint64_t hits;
    uint32_t method;
};

struct file_work {
    uint32_t document;
    uint32_t file;
    struct candidate *cands;
    size_t cand_count, cand_cap;
};

struct asm_build {
    struct loader *l;
    struct asm_work *w;
    const struct assembly *a;
    uint32_t index;                 /* in d->assemblies */
    struct file_work *files;        /* by document row */
    uint32_t doc_count;
    uint32_t *owner_method;         /* [owner row]: method index + 1 */
};

static int add_file(struct asm_build *b, uint32_t document, uint32_t *out)
{
    struct file_work *fw = &b->files[document];
    if (fw->document) {
        *out = fw->file;
        return 0;
    }
    struct covdata *d = b->l->d;
    if (GROW(d->files, d->file_count, b->l->cap_files) < 0)
        return -1;
    char path[4096];
    if (ppdb_document_name(&b->a->pdb, document, path, sizeof path) < 0)
        snprintf(path, sizeof path, "(document %u)", document);
    struct covdata_file *f = &d->files[d->file_count];
    memset(f, 0, sizeof *f);
    f->path = mem_strdup(path);
    f->assembly = b->index;
    if (!f->path)
        return -1;
    fw->document = document;
    fw->file = d->file_count++;
    *out = fw->file;
    return 0;
}

/* The class of a user type in a file. */
static int class_of(struct asm_build *b, uint32_t type, uint32_t file, uint32_t *out)
{
    struct covdata *d = b->l->d;
    char name[1024];
    assembly_type_name(b->a, type, name, sizeof name);
    if (!name[0])
        snprintf(name, sizeof name, "<Module>");
    for (uint32_t i = d->class_count; i-- > 0;) {
        if (d->classes[i].assembly != b->index)
            break;
        if (d->classes[i].file == file && !strcmp(d->classes[i].name, name)) {
            *out = i;
            return 0;
        }
    }
    if (GROW(d->classes, d->class_count, b->l->cap_classes) < 0)
        return -1;
    struct covdata_class *c = &d->classes[d->class_count];
    memset(c, 0, sizeof *c);
    c->name = mem_strdup(name);
    c->assembly = b->index;
    c->file = file;
    if (!c->name)
        return -1;
    *out = d->class_count++;
    return 0;
}

/* A method signature's parameters, simply: "(Int32, String[])". */
static void type_words(const struct assembly *a, const uint8_t **p, const uint8_t *end, char *out,
                       size_t size, int depth);

static void append(char *out, size_t size, const char *s)
{
    size_t n = strlen(out);
    if (n + 1 < size)
        snprintf(out + n, size - n, "%s", s);
}

static void type_words(const struct assembly *a, const uint8_t **p, const uint8_t *end, char *out,
                       size_t size, int depth)
{
    static const char *const prims[] = {
        [0x01] = "Void", [0x02] = "Boolean", [0x03] = "Char", [0x04] = "SByte", [0x05] = "Byte",
        [0x06] = "Int16", [0x07] = "UInt16", [0x08] = "Int32", [0x09] = "UInt32", [0x0a] = "Int64",
        [0x0b] = "UInt64", [0x0c] = "Single", [0x0d] = "Double", [0x0e] = "String",
        [0x16] = "TypedReference", [0x18] = "IntPtr", [0x19] = "UIntPtr", [0x1c] = "Object",
    };
    if (*p >= end || depth > 8) {
        *p = end;
        return;
    }
    uint8_t t = *(*p)++;
    uint32_t v;
    char name[256];
    if (t < sizeof prims / sizeof prims[0] && prims[t]) {
        append(out, size, prims[t]);
    } else if (t == 0x11 || t == 0x12) { /* class, valuetype */
        if (md_uncompress(p, end, &v) < 0)
            return;
        static const enum md_table tables[] = {MD_TYPEDEF, MD_TYPEREF, MD_TYPESPEC};
        name[0] = '\0';
        if ((v & 3) == 0)
            assembly_type_name(a, v >> 2, name, sizeof name);
        else if ((v & 3) == 1)
            snprintf(name, sizeof name, "%s",
                     md_string(&a->md, md_get(&a->md, tables[1], v >> 2, MD_TYPEREF_NAME)));
        char *dot = strrchr(name, '.');
        append(out, size, dot ? dot + 1 : name);
    } else if (t == 0x1d) { /* szarray */
        type_words(a, p, end, out, size, depth + 1);
        append(out, size, "[]");
    } else if (t == 0x10 || t == 0x0f) { /* byref, pointer */
        type_words(a, p, end, out, size, depth + 1);
        append(out, size, t == 0x10 ? "&" : "*");
    } else if (t == 0x13 || t == 0x1e) { /* var, mvar */
        if (md_uncompress(p, end, &v) < 0)
            return;
        snprintf(name, sizeof name, "%s%u", t == 0x13 ? "!" : "!!", v);
        append(out, size, name);
    } else if (t == 0x15) { /* generic instance */
        type_words(a, p, end, out, size, depth + 1);
        if (md_uncompress(p, end, &v) < 0)
            return;
        char *tick = strrchr(out, '`');
        if (tick)
            *tick = '\0';
        append(out, size, "<");
        for (uint32_t i = 0; i < v && *p < end; i++) {
            if (i)
                append(out, size, ",");
            type_words(a, p, end, out, size, depth + 1);
        }
        append(out, size, ">");
    } else if (t == 0x1f || t == 0x20) { /* modreq, modopt: skip the modifier */
        if (md_uncompress(p, end, &v) < 0)
            return;
        type_words(a, p, end, out, size, depth + 1);
    } else if (t == 0x14) { /* array: element, rank and bounds */
        type_words(a, p, end, out, size, depth + 1);
        append(out, size, "[,]");
        *p = end; /* bounds follow; the rest of the signature is not read */
    } else {
        *p = end;
    }
}

static char *signature_of(const struct assembly *a, uint32_t row)
{
    char out[512] = "(";
    const uint8_t *sig;
    uint32_t len;
    if (md_blob(&a->md, md_get(&a->md, MD_METHODDEF, row, MD_METHODDEF_SIGNATURE), &sig, &len) == 0 &&
        len >= 2) {
        const uint8_t *p = sig, *end = sig + len;
        uint8_t conv = *p++;
        uint32_t n, generic = 0;
        if ((conv & 0x10) && md_uncompress(&p, end, &generic) < 0)
            p = end;
        if (md_uncompress(&p, end, &n) == 0) {
            char ret[256] = "";
            type_words(a, &p, end, ret, sizeof ret, 0); /* the return type */
            for (uint32_t i = 0; i < n && p < end; i++) {
                if (i)
                    append(out, sizeof out, ", ");
                type_words(a, &p, end, out, sizeof out, 0);
            }
        }
    }
    append(out, sizeof out, ")");
    return mem_strdup(out);
}

/* The method record of a user method (created on first use, in the class
 * of its type and the file of its first line). */
static int method_of(struct asm_build *b, uint32_t owner, uint32_t file, uint32_t *out)
{
    if (b->owner_method[owner]) {
        *out = b->owner_method[owner] - 1;
        return 0;
    }
    struct covdata *d = b->l->d;
    uint32_t type = b->a->methods[owner - 1].type;
    uint32_t klass;
    if (class_of(b, type ? b->a->types[type - 1].user : 0, file, &klass) < 0 ||
        GROW(d->methods, d->method_count, b->l->cap_methods) < 0)
        return -1;
    struct covdata_method *m = &d->methods[d->method_count];
    memset(m, 0, sizeof *m);
    m->name = mem_strdup(assembly_method_name(b->a, owner));
    m->signature = signature_of(b->a, owner);
    m->klass = klass;
    m->token = md_token(MD_METHODDEF, owner);
    if (!m->name || !m->signature)
        return -1;
    b->owner_method[owner] = ++d->method_count;
    *out = d->method_count - 1;
    return 0;
}

static int add_branch(struct covdata_file *f, size_t *cap, struct covdata_branch br)
{
    if (GROW(f->branches, f->branch_count, *cap) < 0)
        return -1;
    f->branches[f->branch_count++] = br;
    return 0;
}

/* One method's probes into the files' candidates and branches. */
static int plan_method(struct asm_build *b, uint32_t row, size_t *branch_caps)
{
    const struct assembly *a = b->a;
    struct asm_work *w = b->w;
    size_t avail;
    const uint8_t *bytes = assembly_method_body(a, row, &avail);
    struct il_body body;
    char why[256];
    uint32_t token = md_token(MD_METHODDEF, row);
    for (size_t k = 0; k < w->skip_count; k++)
        if (w->skips[k].token == token) {
            int ran = 0;
            for (size_t h = 0; h < w->hit_count && !ran; h++)
                ran = w->hits[h].token == token;
            if (!ran)
                return 1; /* listed as skipped by the caller */
        }
    if (!bytes || il_parse(bytes, avail, &body, why, sizeof why) < 0)
        return 1;
    struct covplan plan;
    if (covplan_method(a, row, &body, w->state == COVFILE_METHODS_ONLY, &plan, why, sizeof why) < 0) {
        il_body_free(&body);
        return 1;
    }
    uint32_t owner = a->methods[row - 1].owner;
    int rc = 0, seen = 0;
    for (uint32_t k = 0; rc == 0 && k < plan.count; k++) {
        const struct covplan_probe *p = &plan.probes[k];
        /* a branch probe sharing a line's count reads that line's counter */
        const struct covplan_probe *counted = p->same_as >= 0 ? &plan.probes[p->same_as] : p;
        uint64_t hits = hits_of(w, token, counted, &seen);
        if (p->kind == COVFILE_PROBE_ENTRY) {
            uint32_t m;
            if (method_of(b, owner, UINT32_MAX, &m) < 0) {
                rc = -1;
                break;
            }
            b->l->d->methods[m].entries += hits;
            continue;
        }
        const struct ppdb_point *pt = &plan.points[p->point];
        if (!pt->document || pt->document > b->doc_count)
            continue;
        uint32_t file, m;
        if (add_file(b, pt->document, &file) < 0 || method_of(b, owner, file, &m) < 0) {
            rc = -1;
            break;
        }
        struct covdata_method *dm = &b->l->d->methods[m];
        if (!dm->first_line || pt->start_line < dm->first_line)
            dm->first_line = pt->start_line;
        if (pt->end_line > dm->last_line)
            dm->last_line = pt->end_line;
        if (p->kind == COVFILE_PROBE_LINE) {
            struct file_work *fw = &b->files[pt->document];
            if (GROW(fw->cands, fw->cand_count, fw->cand_cap) < 0) {
                rc = -1;
                break;
            }
            fw->cands[fw->cand_count++] =
                (struct candidate){pt->start_line, pt->end_line, hits, m};
        } else {
            rc = add_branch(&b->l->d->files[file], &branch_caps[file],
                            (struct covdata_branch){pt->start_line, p->il_offset, p->path, hits, m});
        }
    }
    covplan_free(&plan);
    il_body_free(&body);
    return rc;
}

struct line_hit {
    uint32_t line;
    uint64_t hits;
    uint32_t method;
    uint32_t order;
};

static int cmp_line_hit(const void *x, const void *y)
{
    const struct line_hit *a = x, *b = y;
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

static int cmp_branch(const void *x, const void *y)
{
    const struct covdata_branch *a = x, *b = y;
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    if (a->method != b->method)
        return a->method < b->method ? -1 : 1;
    if (a->il_offset != b->il_offset)
        return a->il_offset < b->il_offset ? -1 : 1;
    return a->path < b->path ? -1 : a->path > b->path;
}

/* A file's lines from its candidates, by coverlet's rule: a multi-line
 * point gives its hits to its lines but those of points nested strictly
 * inside it. */
static int lines_of(struct covdata_file *f, struct file_work *fw)
{
    size_t cap = 0, n = 0;
    struct line_hit *v = NULL;
    for (size_t i = 0; i < fw->cand_count; i++) {
        const struct candidate *c = &fw->cands[i];
        if (c->end < c->start || c->end - c->start > 100000)
            continue;
        for (uint32_t line = c->start; line <= c->end; line++) {
            int nested = 0;
            for (size_t k = 0; c->end > c->start && k < fw->cand_count && !nested; k++) {
                const struct candidate *o = &fw->cands[k];
                nested = k != i && o->start > c->start && o->end < c->end && line >= o->start &&
                         line <= o->end;
            }
            if (GROW(v, n, cap) < 0) {
                mem_free(v);
                return -1;
            }
            v[n] = (struct line_hit){line, nested ? 0 : c->hits, c->method, (uint32_t)n};
            n++;
        }
    }
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_line_hit);
    f->lines = mem_calloc(n + 1, sizeof *f->lines);
    if (!f->lines) {
        mem_free(v);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (f->line_count && f->lines[f->line_count - 1].line == v[i].line) {
            f->lines[f->line_count - 1].hits += v[i].hits;
            continue;
        }
        f->lines[f->line_count++] = (struct covdata_line){.line = v[i].line, .hits = v[i].hits,
                                                          .method = v[i].method};
    }
    mem_free(v);
    if (f->branch_count > 1)
        qsort(f->branches, f->branch_count, sizeof *f->branches, cmp_branch);
    /* branches onto their lines (a line without a point of its own gets one) */
    for (uint32_t i = 0, k = 0; i < f->branch_count; i++) {
        while (k < f->line_count && f->lines[k].line < f->branches[i].line)
            k++;
        if (k < f->line_count && f->lines[k].line == f->branches[i].line) {
            f->lines[k].branches++;
            f->lines[k].branches_covered += f->branches[i].hits > 0;
        }
    }
    return 0;
}

static void add_counts(struct covdata_counts *to, const struct covdata_counts *c)
{
    to->lines += c->lines;
    to->lines_covered += c->lines_covered;
    to->branches += c->branches;
    to->branches_covered += c->branches_covered;
    to->methods += c->methods;
    to->methods_covered += c->methods_covered;
}

static int add_skip(struct loader *l, uint32_t assembly, const char *method, const char *why)
{
    struct covdata *d = l->d;
    if (GROW(d->skipped, d->skipped_count, l->cap_skipped) < 0)
        return -1;
    struct covdata_skip *s = &d->skipped[d->skipped_count];
    s->assembly = assembly;
    s->method = mem_strdup(method);
    s->why = mem_strdup(why);
    if (!s->method || !s->why)
        return -1;
    d->skipped_count++;
    return 0;
}

static int build_assembly(struct loader *l, struct asm_work *w)
{
    struct covdata *d = l->d;
    if (GROW(d->assemblies, d->assembly_count, l->cap_assemblies) < 0)
        return -1;
    uint32_t index = d->assembly_count++;
    struct covdata_assembly *da = &d->assemblies[index];
    memset(da, 0, sizeof *da);
    da->name = mem_strdup(w->name);
    da->path = mem_strdup(w->path);
    memcpy(da->mvid, w->mvid, 16);
    da->state = w->state;
    if (!da->name || !da->path)
        return -1;
    if (w->state != COVFILE_COVERED && w->state != COVFILE_METHODS_ONLY) {
        da->note = mem_strdup(w->why ? w->why : "not covered");
        return da->note ? 0 : -1;
    }
    struct assembly a;
    char why[512];
    if (assembly_open(&a, w->path, why, sizeof why) < 0) {
        da->note = mem_strdup(why);
        return da->note ? 0 : -1;
    }
    if (memcmp(a.mvid, w->mvid, 16) != 0) {
        assembly_close(&a);
        da->note = mem_strdup("the file changed since the run (another build): its lines are not known");
        return da->note ? 0 : -1;
    }
    if (w->state == COVFILE_COVERED && !assembly_has_pdb(&a)) {
        assembly_close(&a);
        da->note = mem_strdup("its PDB is gone since the run: its lines are not known");
        return da->note ? 0 : -1;
    }
    if (w->state == COVFILE_METHODS_ONLY)
        da->note = mem_strdup(w->why ? w->why : "no PDB");
    merge_hits(w);
    struct asm_build b = {.l = l, .w = w, .a = &a, .index = index};
    b.doc_count = assembly_has_pdb(&a) ? md_rows(&a.pdb.md, MD_DOCUMENT) : 0;
    b.files = mem_calloc((size_t)b.doc_count + 1, sizeof *b.files);
    b.owner_method = mem_calloc((size_t)a.method_count + 1, sizeof *b.owner_method);
    uint32_t first_file = d->file_count, first_method = d->method_count;
    int named = covplan_filters_match(&l->include, a.name);
    int rc = b.files && b.owner_method ? 0 : -1;
    size_t *branch_caps = NULL;
    size_t branch_caps_n = 0;
    for (uint32_t row = 1; rc == 0 && row <= a.method_count; row++) {
        if (!covplan_candidate(&a, row, w->state == COVFILE_METHODS_ONLY, &l->include, &l->exclude,
                               named))
            continue;
        /* room for a branch capacity per file that may appear */
        if (branch_caps_n < (size_t)d->file_count + b.doc_count + 1) {
            size_t want = (size_t)d->file_count + b.doc_count + 1;
            size_t *grown = mem_realloc(branch_caps, want * sizeof *grown);
            if (!grown) {
                rc = -1;
                break;
            }
            memset(grown + branch_caps_n, 0, (want - branch_caps_n) * sizeof *grown);
            branch_caps = grown;
            branch_caps_n = want;
        }
        int r = plan_method(&b, row, branch_caps);
        if (r < 0) {
            rc = -1;
        } else if (r > 0) {
            const char *reason = "the IL engine refused its body";
            for (size_t k = 0; k < w->skip_count; k++)
                if (w->skips[k].token == md_token(MD_METHODDEF, row))
                    reason = w->skips[k].why;
            char type[1024], full[1300];
            assembly_type_name(&a, a.methods[row - 1].type, type, sizeof type);
            snprintf(full, sizeof full, "%s.%s", type, assembly_method_name(&a, row));
            rc = add_skip(l, index, full, reason);
        }
    }
    mem_free(branch_caps);
    for (uint32_t doc = 1; rc == 0 && doc <= b.doc_count; doc++)
        if (b.files[doc].document)
            rc = lines_of(&d->files[b.files[doc].file], &b.files[doc]);
    for (uint32_t doc = 0; b.files && doc <= b.doc_count; doc++)
        mem_free(b.files[doc].cands);
    mem_free(b.files);
    mem_free(b.owner_method);
    /* the counts: files, then methods and classes from the lines */
    for (uint32_t f = first_file; rc == 0 && f < d->file_count; f++) {
        struct covdata_file *file = &d->files[f];
        for (uint32_t i = 0; i < file->line_count; i++) {
            const struct covdata_line *ln = &file->lines[i];
            struct covdata_counts c = {.lines = 1, .lines_covered = ln->hits > 0,
                                       .branches = ln->branches,
                                       .branches_covered = ln->branches_covered};
            add_counts(&file->counts, &c);
            add_counts(&d->methods[ln->method].counts, &c);
        }
    }
    for (uint32_t m = first_method; rc == 0 && m < d->method_count; m++) {
        struct covdata_method *dm = &d->methods[m];
        if (w->state == COVFILE_METHODS_ONLY) {
            dm->counts.methods = 1;
            dm->counts.methods_covered = dm->entries > 0;
        } else if (dm->counts.lines) {
            dm->counts.methods = 1;
            dm->counts.methods_covered = dm->counts.lines_covered > 0;
        }
        add_counts(&d->classes[dm->klass].counts, &dm->counts);
        add_counts(&da->counts, &dm->counts);
    }
    add_counts(&d->total, &da->counts);
    assembly_close(&a);
    return rc;
}

/* ---- the run ---------------------------------------------------------------------------- */

static int is_counter_file(const char *name)
{
    size_t n = strlen(name);
    return !strncmp(name, "cover-", 6) && n > 10 && !strcmp(name + n - 4, ".bin");
}

static int cmp_assembly(const void *x, const void *y)
{
    const struct asm_work *a = x, *b = y;
    return strcmp(a->name, b->name);
}

int covdata_load(struct covdata *d, const char *dir, const char *include, const char *exclude,
                 char *why, size_t why_size)
{
    memset(d, 0, sizeof *d);
    struct loader l = {.d = d};
    if (covplan_filters_parse(&l.include, include) < 0 ||
        covplan_filters_parse(&l.exclude, exclude) < 0) {
        snprintf(why, why_size, "out of memory");
        return -1;
    }
    DIR *dd = opendir(dir);
    if (!dd) {
        snprintf(why, why_size, "cannot read %s: %s", dir, strerror(errno));
        covplan_filters_free(&l.include);
        covplan_filters_free(&l.exclude);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(dd)) != NULL) {
        if (!is_counter_file(e->d_name))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        rc = take_counters(&l, path);
    }
    closedir(dd);
    if (rc == 0 && d->processes == 0 && d->damaged) {
        snprintf(why, why_size, "%u counter file%s in %s, none of them readable (damaged, or of "
                                "another version of corscope)", d->damaged, d->damaged == 1 ? "" : "s",
                 dir);
        rc = -1;
    } else if (rc == 0 && d->processes == 0) {
        snprintf(why, why_size, "no counter file in %s: the agent did not start in any process "
                                "(is it a .NET program?)", dir);
        rc = -1;
    }
    if (rc == 0)
        if (l.work_count > 1)
            qsort(l.work, l.work_count, sizeof *l.work, cmp_assembly);
    for (size_t i = 0; rc == 0 && i < l.work_count; i++)
        rc = build_assembly(&l, &l.work[i]);
    if (rc < 0 && !why[0])
        snprintf(why, why_size, "out of memory");
    for (size_t i = 0; i < l.work_count; i++) {
        mem_free(l.work[i].path);
        mem_free(l.work[i].name);
        mem_free(l.work[i].why);
        mem_free(l.work[i].hits);
        for (size_t k = 0; k < l.work[i].skip_count; k++)
            mem_free(l.work[i].skips[k].why);
        mem_free(l.work[i].skips);
    }
    mem_free(l.work);
    covplan_filters_free(&l.include);
    covplan_filters_free(&l.exclude);
    if (rc < 0)
        covdata_free(d);
    return rc;
}

void covdata_free(struct covdata *d)
{
    for (uint32_t i = 0; i < d->assembly_count; i++) {
        mem_free(d->assemblies[i].name);
        mem_free(d->assemblies[i].path);
        mem_free(d->assemblies[i].note);
    }
    for (uint32_t i = 0; i < d->file_count; i++) {
        mem_free(d->files[i].path);
        mem_free(d->files[i].lines);
        mem_free(d->files[i].branches);
    }
    for (uint32_t i = 0; i < d->class_count; i++)
        mem_free(d->classes[i].name);
    for (uint32_t i = 0; i < d->method_count; i++) {
        mem_free(d->methods[i].name);
        mem_free(d->methods[i].signature);
    }
    for (uint32_t i = 0; i < d->skipped_count; i++) {
        mem_free(d->skipped[i].method);
        mem_free(d->skipped[i].why);
    }
    mem_free(d->assemblies);
    mem_free(d->files);
    mem_free(d->classes);
    mem_free(d->methods);
    mem_free(d->skipped);
    memset(d, 0, sizeof *d);
}
