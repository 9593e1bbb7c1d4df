/*
 * Tests of coverage's readers of assemblies (common/pdb: pe, meta, ppdb,
 * assembly) and of the plan made over them (format/covplan): ECMA-335
 * compressed integers from the standard's examples; an assembly with its
 * portable PDB and the same assembly with the PDB embedded
 * (tests/unit/data/CoverLib*: tests/apps/CoverLib built once and kept, so
 * that lines are fixed): the same sequence points from both, names, hidden
 * points, state machines, owners of compiler-generated code, exclusions,
 * the probes of a known method and the filters; damaged files and
 * allocation failures refused without a crash.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/mem.h"
#include "common/pdb/assembly.h"
#include "format/covplan.h"
#include "fixture.h"
#include "test.h"

static void test_compressed_integers(void)
{
    /* ECMA-335 II.23.2's examples */
    static const struct {
        uint8_t bytes[4];
        size_t len;
        uint32_t value;
    } u[] = {
        {{0x03}, 1, 0x03}, {{0x7f}, 1, 0x7f}, {{0x80, 0x80}, 2, 0x80},
        {{0xae, 0x57}, 2, 0x2e57}, {{0xbf, 0xff}, 2, 0x3fff}, {{0xc0, 0x00, 0x40, 0x00}, 4, 0x4000},
        {{0xdf, 0xff, 0xff, 0xff}, 4, 0x1fffffff},
    };
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++) {
        const uint8_t *p = u[i].bytes;
        uint32_t v;
        CHECK(md_uncompress(&p, u[i].bytes + u[i].len, &v) == 0);
        CHECK_EQ(v, u[i].value);
        CHECK_EQ(p - u[i].bytes, u[i].len);
        p = u[i].bytes;
        CHECK(md_uncompress(&p, u[i].bytes + u[i].len - 1, &v) < 0 || u[i].len == 1);
    }
    static const struct {
        uint8_t bytes[4];
        size_t len;
        int32_t value;
    } s[] = {
        {{0x06}, 1, 3}, {{0x7b}, 1, -3}, {{0x80, 0x80}, 2, 64}, {{0x01}, 1, -64},
        {{0xc0, 0x00, 0x40, 0x00}, 4, 8192}, {{0x80, 0x01}, 2, -8192},
        {{0xdf, 0xff, 0xff, 0xfe}, 4, 268435455}, {{0xc0, 0x00, 0x00, 0x01}, 4, -268435456},
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        const uint8_t *p = s[i].bytes;
        int32_t v;
        CHECK(md_uncompress_signed(&p, s[i].bytes + s[i].len, &v) == 0);
        CHECK_EQ((uint32_t)v, (uint32_t)s[i].value);
    }
    const uint8_t reserved[] = {0xe0, 0, 0, 0};
    const uint8_t *p = reserved;
    uint32_t v;
    CHECK(md_uncompress(&p, reserved + 4, &v) < 0);
}

/* MethodDef row of Type::Name, 0 when none. */
static uint32_t method_row(const struct assembly *a, const char *type, const char *name)
{
    for (uint32_t m = 1; m <= a->method_count; m++) {
        char t[512];
        assembly_type_name(a, a->methods[m - 1].type, t, sizeof t);
        if (!strcmp(t, type) && !strcmp(assembly_method_name(a, m), name))
            return m;
    }
    return 0;
}

static void check_assembly(const struct assembly *a)
{
    CHECK_STR(a->name, "CoverLib");
    CHECK(!a->test_assembly);
    CHECK(!a->readytorun);
    uint8_t zero[16] = {0};
    CHECK(memcmp(a->mvid, zero, 16) != 0);
    uint32_t sign = method_row(a, "CoverLib.Branches", "Sign");
    REQUIRE(sign);
    struct ppdb_point *pts;
    uint32_t n;
    const char *why;
    REQUIRE(ppdb_sequence_points(&a->pdb, sign, &pts, &n, &why) == 0);
    /* if (x > 0) / return "positive" / else if (x < 0) / return "negative" / return "zero" */
    REQUIRE(n == 5);
    static const uint32_t lines[] = {9, 11, 13, 15, 17};
    for (uint32_t i = 0; i < n; i++) {
        CHECK_EQ(pts[i].start_line, lines[i]);
        CHECK(i == 0 || pts[i].il_offset > pts[i - 1].il_offset);
    }
    CHECK_EQ(pts[0].il_offset, 0);
    CHECK_EQ(pts[0].start_column, 9);
    char doc[512];
    CHECK(ppdb_document_name(&a->pdb, pts[0].document, doc, sizeof doc) > 0);
    CHECK(strstr(doc, "/CoverLib/Shapes.cs") != NULL);
    mem_free(pts);
    /* an async method's MoveNext: its kickoff, a hidden point first */
    uint32_t twice = method_row(a, "CoverLib.Asyncs", "Twice");
    uint32_t move_next = method_row(a, "CoverLib.Asyncs+<Twice>d__0", "MoveNext");
    REQUIRE(twice && move_next);
    CHECK_EQ(a->methods[move_next - 1].kickoff, twice);
    CHECK_EQ(a->methods[move_next - 1].owner, twice);
    CHECK(a->methods[move_next - 1].generated);
    CHECK(a->types[a->methods[move_next - 1].type - 1].machine & ASSEMBLY_MACHINE_ASYNC);
    REQUIRE(ppdb_sequence_points(&a->pdb, move_next, &pts, &n, &why) == 0);
    REQUIRE(n > 2);
    CHECK_EQ(pts[0].start_line, PPDB_HIDDEN_LINE);
    mem_free(pts);
    /* a local function's async state machine belongs to the method */
    uint32_t with_local = method_row(a, "CoverLib.MoreAsync", "WithLocal");
    uint32_t local_next = method_row(a, "CoverLib.MoreAsync+<<WithLocal>g__Add|2_0>d", "MoveNext");
    REQUIRE(with_local && local_next);
    CHECK_EQ(a->methods[local_next - 1].owner, with_local);
    /* exclusions: a type, a method and that method's lambda */
    uint32_t hidden = method_row(a, "CoverLib.Excluded", "Hidden");
    uint32_t dropped = method_row(a, "CoverLib.PartlyExcluded", "Dropped");
    uint32_t kept = method_row(a, "CoverLib.PartlyExcluded", "Kept");
    uint32_t lambda = method_row(a, "CoverLib.PartlyExcluded+<>c__DisplayClass1_0", "<Dropped>b__0");
    REQUIRE(hidden && dropped && kept && lambda);
    CHECK(a->methods[hidden - 1].excluded);
    CHECK(a->methods[dropped - 1].excluded);
    CHECK(a->methods[lambda - 1].excluded);
    CHECK(!a->methods[kept - 1].excluded);
    /* the plan of Sign: its five lines, two branches of two ways each */
    size_t avail;
    const uint8_t *bytes = assembly_method_body(a, sign, &avail);
    REQUIRE(bytes);
    struct il_body b;
    char reason[200];
    REQUIRE(il_parse(bytes, avail, &b, reason, sizeof reason) == 0);
    struct covplan plan;
    REQUIRE(covplan_method(a, sign, &b, 0, &plan, reason, sizeof reason) == 0);
    uint32_t line_probes = 0, branch_probes = 0;
    for (uint32_t i = 0; i < plan.count; i++) {
        line_probes += plan.probes[i].kind == COVFILE_PROBE_LINE;
        branch_probes += plan.probes[i].kind == COVFILE_PROBE_BRANCH;
    }
    CHECK_EQ(line_probes, 5);
    CHECK_EQ(branch_probes, 4);
    covplan_free(&plan);
    il_body_free(&b);
    struct covplan_filters none = {0};
    CHECK(covplan_candidate(a, sign, 0, &none, &none, 0));
    CHECK(!covplan_candidate(a, hidden, 0, &none, &none, 0));
    struct covplan_filters ex;
    REQUIRE(covplan_filters_parse(&ex, "CoverLib.Bran*,nothing") == 0);
    CHECK(!covplan_candidate(a, sign, 0, &none, &ex, 0));
    CHECK(covplan_candidate(a, kept, 0, &none, &ex, 0));
    covplan_filters_free(&ex);
}

static void test_assembly_with_pdb(void)
{
    struct assembly a;
    char why[256];
    REQUIRE(assembly_open(&a, "tests/unit/data/CoverLib.dll", why, sizeof why) == 0);
    CHECK_EQ(a.pdb_state, ASSEMBLY_PDB_FILE);
    CHECK(strstr(a.pdb_path, "tests/unit/data/CoverLib.pdb") != NULL);
    check_assembly(&a);
    assembly_close(&a);
}

static void test_assembly_embedded_pdb(void)
{
    struct assembly a;
    char why[256];
    REQUIRE(assembly_open(&a, "tests/unit/data/CoverLibEmbedded.dll", why, sizeof why) == 0);
    CHECK_EQ(a.pdb_state, ASSEMBLY_PDB_EMBEDDED);
    check_assembly(&a);
    assembly_close(&a);
}

static void test_assembly_damaged(void)
{
    size_t size, pdb_size;
    uint8_t *image = fixture_read_file("tests/unit/data/CoverLib.dll", &size);
    uint8_t *pdb = fixture_read_file("tests/unit/data/CoverLib.pdb", &pdb_size);
    REQUIRE(image && pdb);
    struct assembly a;
    char why[256];
    /* the PDB of another build: refused, the assembly usable */
    uint8_t *other = malloc(pdb_size);
    REQUIRE(other);
    memcpy(other, pdb, pdb_size);
    struct md md;
    const char *reason;
    REQUIRE(md_open(&md, other, pdb_size, &reason) == 0);
    ((uint8_t *)md.pdb)[0] ^= 0xff; /* the PDB id */
    REQUIRE(assembly_load(&a, image, size, other, pdb_size, why, sizeof why) == 0);
    CHECK_EQ(a.pdb_state, ASSEMBLY_PDB_MISMATCH);
    CHECK(a.method_count > 50);
    assembly_close(&a);
    /* every truncation of the image and of the PDB: no crash, no leak */
    for (size_t cut = 0; cut < size; cut += size / 97 + 1) {
        if (assembly_load(&a, image, cut, pdb, pdb_size, why, sizeof why) == 0)
            assembly_close(&a);
    }
    for (size_t cut = 0; cut < pdb_size; cut += pdb_size / 97 + 1) {
        REQUIRE(assembly_load(&a, image, size, pdb, cut, why, sizeof why) == 0);
        CHECK(a.pdb_state != ASSEMBLY_PDB_FILE || cut > pdb_size * 9 / 10);
        assembly_close(&a);
    }
    /* allocation failures */
    for (long k = 1; k < 30; k++) {
        mem_fail_after(k, 0);
        if (assembly_load(&a, image, size, pdb, pdb_size, why, sizeof why) == 0)
            assembly_close(&a);
    }
    mem_fail_after(0, 0);
    CHECK(assembly_open(&a, "tests/unit/data/no-such.dll", why, sizeof why) < 0);
    CHECK(strstr(why, "no-such.dll") != NULL);
    free(image);
    free(pdb);
    free(other);
}

void suite_assembly(void)
{
    RUN(test_compressed_integers);
    RUN(test_assembly_with_pdb);
    RUN(test_assembly_embedded_pdb);
    RUN(test_assembly_damaged);
}
