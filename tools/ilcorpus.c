/*
 * ilcorpus: reads .NET assemblies with corscope's own readers (common/pdb)
 * and IL engine (agent/il), for building test corpora and for looking.
 *
 *   ilcorpus extract OUTDIR FILE.dll...   writes every method body the
 *       engine parses as OUTDIR/ASSEMBLY-TOKEN.il (the body as in the
 *       file: header, code, sections), for tests/unit (the rewrite corpus)
 *       and the fuzzers' seeds; prints how many were written and refused
 *   ilcorpus dump FILE.dll                prints the assembly as coverage
 *       sees it: its PDB, each method's names, flags and sequence points
 *   ilcorpus select OUT FILE.dll...       writes a corpus file for the unit
 *       tests (tests/unit/data/il_corpus.bin: records of a u32 size and a
 *       body): every body of the small assemblies with a PDB (ours),
 *       and of the big ones the bodies that bring something new -- each
 *       opcode, each clause kind in small and fat sections, tiny headers,
 *       switches, prefixes, the most clauses, the biggest bodies, and
 *       rewrites that had to widen a short branch
 *   ilcorpus disasm FILE.dll NAME          lists the IL of the methods named
 *       NAME (or whose type and name, "Type::Method", contain NAME), with
 *       their sequence points and the probes coverage puts in them
 *   ilcorpus check FILE.dll...            rewrites every method body with
 *       a probe at each sequence point (every instruction when there is no
 *       PDB) and on each edge of each conditional branch, and checks each
 *       rewrite (il_check); then again inside a finally (il_edit_wrap, for
 *       the bodies it accepts); prints the failures and the counts
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/il/il.h"
#include "common/pdb/assembly.h"
#include "common/mem.h"
#include "format/covplan.h"

static int extract(const char *dir, const char *path, unsigned long *written, unsigned long *refused)
{
    struct assembly a;
    char why[256];
    if (assembly_open(&a, path, why, sizeof why) < 0) {
        fprintf(stderr, "ilcorpus: %s: %s\n", path, why);
        return -1;
    }
    for (uint32_t m = 1; m <= a.method_count; m++) {
        size_t avail;
        const uint8_t *body = assembly_method_body(&a, m, &avail);
        if (!body)
            continue;
        struct il_body b;
        if (il_parse(body, avail, &b, why, sizeof why) < 0) {
            (*refused)++;
            continue;
        }
        char out[4096];
        snprintf(out, sizeof out, "%s/%s-%08x.il", dir, a.name, 0x06000000u | m);
        FILE *f = fopen(out, "wb");
        if (!f || fwrite(body, 1, b.total_size, f) != b.total_size) {
            fprintf(stderr, "ilcorpus: %s: %s\n", out, strerror(errno));
            if (f)
                fclose(f);
            il_body_free(&b);
            assembly_close(&a);
            return -1;
        }
        fclose(f);
        (*written)++;
        il_body_free(&b);
    }
    assembly_close(&a);
    return 0;
}

static const char *pdb_state_name(enum assembly_pdb s)
{
    static const char *const names[] = {"none", "file", "embedded", "windows", "mismatch", "bad"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

static int dump(const char *path)
{
    struct assembly a;
    char why[256];
    if (assembly_open(&a, path, why, sizeof why) < 0) {
        fprintf(stderr, "ilcorpus: %s: %s\n", path, why);
        return -1;
    }
    printf("assembly %s mvid %02x%02x%02x%02x... pdb %s %s%s%s test=%d r2r=%d\n", a.name, a.mvid[0],
           a.mvid[1], a.mvid[2], a.mvid[3], pdb_state_name(a.pdb_state), a.pdb_path,
           a.pdb_problem ? ": " : "", a.pdb_problem ? a.pdb_problem : "", a.test_assembly,
           a.readytorun);
    for (uint32_t m = 1; m <= a.method_count; m++) {
        const struct assembly_method *am = &a.methods[m - 1];
        char type[512];
        assembly_type_name(&a, am->type, type, sizeof type);
        printf("%08x %s::%s%s%s%s", 0x06000000u | m, type, assembly_method_name(&a, m),
               am->excluded ? " [excluded]" : "", am->generated ? " [generated]" : "",
               am->accessor ? " [accessor]" : "");
        if (am->owner != m)
            printf(" owner=%s", assembly_method_name(&a, am->owner));
        if (am->kickoff)
            printf(" kickoff=%08x", 0x06000000u | am->kickoff);
        printf("\n");
        if (!assembly_has_pdb(&a))
            continue;
        struct ppdb_point *pts;
        uint32_t n;
        const char *reason;
        if (ppdb_sequence_points(&a.pdb, m, &pts, &n, &reason) < 0) {
            printf("    sequence points: %s\n", reason);
            continue;
        }
        for (uint32_t i = 0; i < n; i++) {
            char doc[512];
            ppdb_document_name(&a.pdb, pts[i].document, doc, sizeof doc);
            if (pts[i].start_line == PPDB_HIDDEN_LINE)
                printf("    IL_%04x hidden\n", pts[i].il_offset);
            else
                printf("    IL_%04x %s:%u:%u-%u:%u\n", pts[i].il_offset, doc, pts[i].start_line,
                       pts[i].start_column, pts[i].end_line, pts[i].end_column);
        }
        mem_free(pts);
    }
    assembly_close(&a);
    return 0;
}

/* Probes at the sequence points (or every instruction) and on every edge. */
/* ... and, when wrap, the whole body inside a finally.  Returns 0, -1 with
 * why, or 1 when the wrap was refused. */
static int check_one(const struct assembly *a, uint32_t m, const struct il_body *b, int wrap,
                     char *why, size_t size)
{
    struct il_edit e;
    il_edit_init(&e);
    uint8_t probe[IL_COUNTER_PROBE_SIZE];
    il_counter_probe(probe, 0x7f0000001000ull + m);
    struct ppdb_point *pts = NULL;
    uint32_t n = 0;
    const char *reason;
    if (assembly_has_pdb(a))
        ppdb_sequence_points(&a->pdb, m, &pts, &n, &reason);
    int rc = 0;
    for (uint32_t i = 0; i < b->count && rc == 0; i++) {
        int at_point = !pts;
        for (uint32_t k = 0; k < n; k++)
            at_point |= pts[k].il_offset == b->instrs[i].offset;
        if (at_point && !(b->instrs[i].flags & (IL_INSTR_PREFIXED | IL_INSTR_TAIL_RET)))
            rc = il_edit_add(&e, b, i, IL_BEFORE, 0, probe, sizeof probe, IL_COUNTER_PROBE_STACK,
                             why, size);
        if (i == 0 && rc == 0)
            rc = il_edit_add(&e, b, 0, IL_ENTRY, 0, probe, sizeof probe, IL_COUNTER_PROBE_STACK,
                             why, size);
        if (il_opcode(b->instrs[i].op)->flow == IL_FLOW_COND)
            for (uint32_t k = 0; k <= b->instrs[i].target_count && rc == 0; k++)
                rc = il_edit_add(&e, b, i, IL_EDGE, k, probe, sizeof probe,
                                 IL_COUNTER_PROBE_STACK, why, size);
    }
    mem_free(pts);
    static const uint8_t handler[] = {0x16, 0x26}; /* ldc.i4.0; pop */
    if (rc == 0 && wrap &&
        il_edit_wrap(&e, b, IL_CLAUSE_FINALLY, handler, sizeof handler, 1, IL_NO_RESULT, why,
                     size) < 0) {
        il_edit_free(&e);
        return 1;
    }
    struct il_rewritten r;
    if (rc == 0 && (rc = il_rewrite(b, &e, &r, why, size)) == 0) {
        rc = il_check(b, &e, &r, why, size);
        il_rewritten_free(&r);
    }
    il_edit_free(&e);
    return rc;
}

static int check(const char *path, unsigned long *ok, unsigned long *failed, unsigned long *refused,
                 unsigned long *unwrapped)
{
    struct assembly a;
    char why[256];
    if (assembly_open(&a, path, why, sizeof why) < 0) {
        fprintf(stderr, "ilcorpus: %s: %s\n", path, why);
        return -1;
    }
    for (uint32_t m = 1; m <= a.method_count; m++) {
        size_t avail;
        const uint8_t *body = assembly_method_body(&a, m, &avail);
        struct il_body b;
        if (!body)
            continue;
        if (il_parse(body, avail, &b, why, sizeof why) < 0) {
            (*refused)++;
            printf("refused %s %08x: %s\n", a.name, 0x06000000u | m, why);
            continue;
        }
        for (int wrap = 0; wrap < 2; wrap++) {
            int rc = check_one(&a, m, &b, wrap, why, sizeof why);
            if (rc < 0) {
                (*failed)++;
                printf("FAILED %s %08x %s%s: %s\n", a.name, 0x06000000u | m,
                       assembly_method_name(&a, m), wrap ? " (wrapped)" : "", why);
            } else {
                *(rc ? unwrapped : ok) += 1;
            }
        }
        il_body_free(&b);
    }
    assembly_close(&a);
    return 0;
}

/* ---- disasm ------------------------------------------------------------------- */

static int disasm(const char *path, const char *want)
{
    struct assembly a;
    char why[256];
    if (assembly_open(&a, path, why, sizeof why) < 0) {
        fprintf(stderr, "ilcorpus: %s: %s\n", path, why);
        return -1;
    }
    for (uint32_t m = 1; m <= a.method_count; m++) {
        char type[512], full[1100];
        assembly_type_name(&a, a.methods[m - 1].type, type, sizeof type);
        snprintf(full, sizeof full, "%s::%s", type, assembly_method_name(&a, m));
        if (!strstr(full, want))
            continue;
        size_t avail;
        const uint8_t *bytes = assembly_method_body(&a, m, &avail);
        struct il_body b;
        if (!bytes || il_parse(bytes, avail, &b, why, sizeof why) < 0)
            continue;
        struct covplan plan;
        memset(&plan, 0, sizeof plan);
        covplan_method(&a, m, &b, !assembly_has_pdb(&a), &plan, why, sizeof why);
        printf("%08x %s (max stack %u, %u clauses)\n", 0x06000000u | m, full, b.max_stack,
               b.clause_count);
        for (uint32_t c = 0; c < b.clause_count; c++)
            printf("  clause %u flags %u try %04x+%x handler %04x+%x %08x\n", c, b.clauses[c].flags,
                   b.clauses[c].try_offset, b.clauses[c].try_length, b.clauses[c].handler_offset,
                   b.clauses[c].handler_length, b.clauses[c].token_or_filter);
        for (uint32_t i = 0; i < b.count; i++) {
            const struct il_instr *in = &b.instrs[i];
            for (uint32_t k = 0; k < plan.point_count; k++)
                if (plan.points[k].il_offset == in->offset) {
                    if (plan.points[k].start_line == PPDB_HIDDEN_LINE)
                        printf("      // hidden\n");
                    else
                        printf("      // line %u-%u\n", plan.points[k].start_line, plan.points[k].end_line);
                }
            printf("  IL_%04x %-12s", in->offset, il_opcode(in->op)->name);
            if (in->operand == IL_OPERAND_TOKEN) {
                char t[256];
                const char *n = assembly_member(&a, (uint32_t)in->value, t, sizeof t);
                printf(" %08x %s%s%s", (uint32_t)in->value, t, t[0] ? "::" : "", n);
            } else if (in->target_count) {
                for (uint32_t k = 1; k <= in->target_count; k++)
                    printf(" IL_%04x", il_target(&b, in, k));
            } else if (in->operand != IL_OPERAND_NONE) {
                printf(" %lld", (long long)in->value);
            }
            for (uint32_t k = 0; k < plan.count; k++)
                if (plan.probes[k].instr == i && plan.probes[k].kind == COVFILE_PROBE_BRANCH)
                    printf("  [branch path %u, line %u%s]", plan.probes[k].path,
                           plan.points[plan.probes[k].point].start_line,
                           plan.probes[k].same_as >= 0 ? ", counted by a line" : "");
            printf("\n");
        }
        covplan_free(&plan);
        il_body_free(&b);
    }
    assembly_close(&a);
    return 0;
}

/* ---- select -------------------------------------------------------------------- */

struct selection {
    FILE *out;
    unsigned long kept;
    unsigned per_opcode[0x200];
    unsigned per_clause[8][2]; /* kind, fat section */
    unsigned tiny, switches, widened, many_clauses, big;
};

static int opcode_slot(uint16_t op)
{
    return op < 0x100 ? op : 0x100 + (op & 0xff);
}

static void keep(struct selection *s, const uint8_t *body, size_t size)
{
    uint8_t len[4] = {(uint8_t)size, (uint8_t)(size >> 8), (uint8_t)(size >> 16), (uint8_t)(size >> 24)};
    fwrite(len, 1, 4, s->out);
    fwrite(body, 1, size, s->out);
    s->kept++;
}

/* Does the probe rewrite widen a short branch? */
static int widens(const struct assembly *a, uint32_t m, const struct il_body *b)
{
    struct il_edit e;
    il_edit_init(&e);
    uint8_t probe[IL_COUNTER_PROBE_SIZE];
    il_counter_probe(probe, 1);
    char why[256];
    for (uint32_t i = 0; i < b->count; i++)
        if (!(b->instrs[i].flags & (IL_INSTR_PREFIXED | IL_INSTR_TAIL_RET)))
            il_edit_add(&e, b, i, IL_BEFORE, 0, probe, sizeof probe, 3, why, sizeof why);
    (void)a;
    (void)m;
    struct il_rewritten r;
    int wide = 0;
    if (il_rewrite(b, &e, &r, why, sizeof why) == 0) {
        struct il_body nb;
        if (il_parse(r.body, r.size, &nb, why, sizeof why) == 0) {
            unsigned before = 0, after = 0;
            for (uint32_t i = 0; i < b->count; i++)
                before += b->instrs[i].operand == IL_OPERAND_BR8;
            for (uint32_t i = 0; i < nb.count; i++)
                after += nb.instrs[i].operand == IL_OPERAND_BR8;
            wide = after < before;
            il_body_free(&nb);
        }
        il_rewritten_free(&r);
    }
    il_edit_free(&e);
    return wide;
}

static int select_from(struct selection *s, const char *path)
{
    struct assembly a;
    char why[256];
    if (assembly_open(&a, path, why, sizeof why) < 0) {
        fprintf(stderr, "ilcorpus: %s: %s\n", path, why);
        return -1;
    }
    int all = assembly_has_pdb(&a) && a.method_count < 2000;
    for (uint32_t m = 1; m <= a.method_count; m++) {
        size_t avail;
        const uint8_t *body = assembly_method_body(&a, m, &avail);
        struct il_body b;
        if (!body || il_parse(body, avail, &b, why, sizeof why) < 0)
            continue;
        int take = all;
        for (uint32_t i = 0; i < b.count; i++)
            if (s->per_opcode[opcode_slot(b.instrs[i].op)]++ < 2)
                take = 1;
        if (b.clause_count) {
            size_t at = (b.header_size + b.code_size + 3) & ~(size_t)3;
            int fat = at < avail && (body[at] & 0x40);
            for (uint32_t i = 0; i < b.clause_count; i++)
                if (s->per_clause[b.clauses[i].flags & 7][fat]++ < 3)
                    take = 1;
        }
        if (b.tiny && s->tiny++ < 20)
            take = 1;
        if (b.target_count && s->switches++ < 10)
            take = 1;
        if (b.clause_count >= 20 && s->many_clauses++ < 5)
            take = 1;
        if (b.code_size >= 3000 && s->big++ < 8)
            take = 1;
        if (!take && s->widened < 20 && b.code_size >= 100 && widens(&a, m, &b)) {
            s->widened++;
            take = 1;
        }
        if (take)
            keep(s, body, b.total_size);
        il_body_free(&b);
    }
    assembly_close(&a);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "select")) {
        static struct selection s;
        s.out = fopen(argv[2], "wb");
        if (!s.out) {
            perror(argv[2]);
            return 1;
        }
        for (int i = 3; i < argc; i++)
            select_from(&s, argv[i]);
        fclose(s.out);
        printf("ilcorpus: %lu bodies selected (%u widened)\n", s.kept, s.widened);
        return 0;
    }
    if (argc >= 4 && !strcmp(argv[1], "disasm"))
        return disasm(argv[2], argv[3]) < 0;
    if (argc >= 3 && !strcmp(argv[1], "dump"))
        return dump(argv[2]) < 0;
    if (argc >= 3 && !strcmp(argv[1], "check")) {
        unsigned long ok = 0, failed = 0, refused = 0, unwrapped = 0;
        for (int i = 2; i < argc; i++)
            check(argv[i], &ok, &failed, &refused, &unwrapped);
        printf("ilcorpus: %lu rewrites checked, %lu failed, %lu bodies refused, %lu not wrapped\n",
               ok, failed, refused, unwrapped);
        return failed ? 1 : 0;
    }
    if (argc >= 4 && !strcmp(argv[1], "extract")) {
        mkdir(argv[2], 0755);
        unsigned long written = 0, refused = 0;
        for (int i = 3; i < argc; i++)
            extract(argv[2], argv[i], &written, &refused);
        printf("ilcorpus: %lu bodies written, %lu refused\n", written, refused);
        return 0;
    }
    fprintf(stderr, "usage: ilcorpus extract OUTDIR FILE.dll... | dump FILE.dll | check FILE.dll...\n");
    return 2;
}
