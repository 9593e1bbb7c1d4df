/*
 * assembly: see assembly.h.
 */
#include "common/pdb/assembly.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/inflate.h"
#include "common/mem.h"

/* An embedded PDB bigger than this is refused (a corrupt size field). */
#define EMBEDDED_MAX (256u << 20)

/* Reference names that make an assembly a test assembly. */
static const char *const test_frameworks[] = {
    "xunit.core", "xunit.assert", "xunit.v3.core", "xunit.v3.assert", "nunit.framework",
    "Microsoft.VisualStudio.TestPlatform.TestFramework", "MSTest.TestFramework", "TUnit.Core",
    "Expecto", "FsUnit",
};

static int set_why(char *why, size_t size, const char *what)
{
    if (why && size)
        snprintf(why, size, "%s", what);
    return -1;
}

static int load_image(struct assembly *a, const uint8_t *image, size_t size, char *why,
                      size_t why_size)
{
    const char *reason = NULL;
    a->image = image;
    a->image_size = size;
    if (pe_open(&a->pe, image, size, &reason) < 0 ||
        md_open(&a->md, a->pe.metadata, a->pe.metadata_size, &reason) < 0)
        return set_why(why, why_size, reason);
    if (pe_debug_read(&a->pe, &a->debug, &reason) < 0)
        memset(&a->debug, 0, sizeof a->debug); /* as if it had none */
    a->name = md_rows(&a->md, MD_ASSEMBLY) ? md_string(&a->md, md_get(&a->md, MD_ASSEMBLY, 1,
                                                                        MD_ASSEMBLY_NAME))
                                           : md_string(&a->md, md_get(&a->md, MD_MODULE, 1,
                                                                        MD_MODULE_NAME));
    const uint8_t *mvid = md_guid(&a->md, md_get(&a->md, MD_MODULE, 1, MD_MODULE_MVID));
    if (mvid)
        memcpy(a->mvid, mvid, 16);
    for (uint32_t r = 1; r <= md_rows(&a->md, MD_ASSEMBLYREF); r++) {
        const char *ref = md_string(&a->md, md_get(&a->md, MD_ASSEMBLYREF, r, MD_ASSEMBLYREF_NAME));
        for (size_t i = 0; i < sizeof test_frameworks / sizeof test_frameworks[0]; i++)
            if (!strcmp(ref, test_frameworks[i]))
                a->test_assembly = 1;
    }
    a->readytorun = pe_is_readytorun(&a->pe);
    return 0;
}

/* Takes PDB bytes as the assembly's when they are a portable PDB of the
 * same build.  Returns 0 when taken. */
static int attach_pdb(struct assembly *a, const uint8_t *data, size_t size, enum assembly_pdb state)
{
    const char *reason = NULL;
    if (ppdb_open(&a->pdb, data, size, &reason) < 0) {
        a->pdb_state = strstr(reason, "Windows") ? ASSEMBLY_PDB_WINDOWS : ASSEMBLY_PDB_BAD;
        a->pdb_problem = reason;
        return -1;
    }
    if (a->debug.codeview && memcmp(a->pdb.id, a->debug.pdb_id, 20) != 0) {
        a->pdb_state = ASSEMBLY_PDB_MISMATCH;
        a->pdb_problem = "the PDB is from another build of the assembly";
        return -1;
    }
    a->pdb_state = state;
    a->pdb_problem = NULL;
    return 0;
}

static int load_embedded(struct assembly *a)
{
    if (!a->debug.embedded)
        return -1;
    if (a->debug.embedded_size == 0 || a->debug.embedded_size > EMBEDDED_MAX) {
        a->pdb_state = ASSEMBLY_PDB_BAD;
        a->pdb_problem = "an embedded PDB of an impossible size";
        return -1;
    }
    uint8_t *out = mem_alloc(a->debug.embedded_size);
    if (!out) {
        a->pdb_state = ASSEMBLY_PDB_BAD;
        a->pdb_problem = "out of memory for the embedded PDB";
        return -1;
    }
    size_t produced;
    const char *reason;
    if (inflate_raw(a->debug.embedded, a->debug.embedded_len, out, a->debug.embedded_size,
                    &produced, &reason) < 0 ||
        produced != a->debug.embedded_size) {
        mem_free(out);
        a->pdb_state = ASSEMBLY_PDB_BAD;
        a->pdb_problem = "an embedded PDB that does not decompress";
        return -1;
    }
    if (attach_pdb(a, out, produced, ASSEMBLY_PDB_EMBEDDED) < 0) {
        mem_free(out);
        return -1;
    }
    a->pdb_data = out;
    a->pdb_size = produced;
    a->pdb_mapped = 0;
    snprintf(a->pdb_path, sizeof a->pdb_path, "(embedded)");
    return 0;
}

/* ---- what each type and method is --------------------------------------------- */

/* The name of the attribute type a CustomAttribute's constructor belongs
 * to (a MemberRef on a TypeRef or TypeDef, or a MethodDef). */
static const char *attribute_name(const struct assembly *a, uint32_t ctor_coded)
{
    enum md_table table;
    uint32_t row;
    if (md_coded(MD_CODED_CUSTOMATTRIBUTETYPE, ctor_coded, &table, &row) < 0)
        return "";
    if (table == MD_METHODDEF)
        return row && row <= a->method_count && a->methods[row - 1].type
                   ? md_string(&a->md, md_get(&a->md, MD_TYPEDEF, a->methods[row - 1].type,
                                              MD_TYPEDEF_NAME))
                   : "";
    uint32_t parent = md_get(&a->md, MD_MEMBERREF, row, MD_MEMBERREF_CLASS);
    if (md_coded(MD_CODED_MEMBERREFPARENT, parent, &table, &row) < 0)
        return "";
    if (table == MD_TYPEREF)
        return md_string(&a->md, md_get(&a->md, MD_TYPEREF, row, MD_TYPEREF_NAME));
    if (table == MD_TYPEDEF)
        return md_string(&a->md, md_get(&a->md, MD_TYPEDEF, row, MD_TYPEDEF_NAME));
    return "";
}

static int is_exclude_attribute(const char *name)
{
    return !strcmp(name, "ExcludeFromCodeCoverageAttribute") ||
           !strcmp(name, "ExcludeFromCodeCoverage") || !strcmp(name, "ExcludeFromCoverageAttribute") ||
           !strcmp(name, "ExcludeFromCoverage");
}

/* The method named `name` declared by type `type`, 0 when none. */
static uint32_t method_named(const struct assembly *a, uint32_t type, const char *name, size_t len)
{
    if (!type || type > a->type_count)
        return 0;
    for (uint32_t m = a->types[type - 1].first_method; m < a->types[type - 1].end_method; m++) {
        if (a->methods[m - 1].type != type)
            continue;
        const char *n = md_string(&a->md, md_get(&a->md, MD_METHODDEF, m, MD_METHODDEF_NAME));
        if (strlen(n) == len && !memcmp(n, name, len))
            return m;
    }
    return 0;
}

/* A compiler-generated method's user method: a MoveNext's kickoff, or the
 * method between the angle brackets of "<Name>b__0_0" (lambda),
 * "<Name>g__Local|0_0" (local function), or of its type's name
 * ("<Name>d__3", a state machine; "<>c__DisplayClass0_0" names none). */
static uint32_t owner_of(const struct assembly *a, uint32_t m)
{
    const struct assembly_method *am = &a->methods[m - 1];
    if (am->kickoff)
        return am->kickoff;
    const char *name = md_string(&a->md, md_get(&a->md, MD_METHODDEF, m, MD_METHODDEF_NAME));
    if (name[0] != '<') {
        const char *tname = md_string(&a->md, md_get(&a->md, MD_TYPEDEF, am->type, MD_TYPEDEF_NAME));
        if (!a->types[am->type - 1].generated || tname[0] != '<')
            return m;
        name = tname;
    }
    const char *close = strchr(name, '>');
    if (!close || close == name + 1)
        return m;
    uint32_t user = a->types[am->type - 1].user;
    uint32_t found = method_named(a, user, name + 1, (size_t)(close - name - 1));
    if (!found && user != am->type)
        found = method_named(a, am->type, name + 1, (size_t)(close - name - 1));
    return found && found != m ? found : m;
}

static int add_span(struct assembly *a, uint32_t document, uint32_t first, uint32_t last,
                    size_t *cap)
{
    if (a->excluded_span_count == *cap) {
        struct assembly_span *grown =
            mem_grow(a->excluded_spans, cap, a->excluded_span_count + 1, sizeof *grown);
        if (!grown)
            return -1;
        a->excluded_spans = grown;
    }
    a->excluded_spans[a->excluded_span_count++] =
        (struct assembly_span){.document = document, .first_line = first, .last_line = last};
    return 0;
}

/* The source lines of every excluded user method (its lambdas and local
 * functions, compiled elsewhere, have their points inside them). */
static int excluded_spans(struct assembly *a)
{
    size_t cap = 0;
    for (uint32_t m = 1; m <= a->method_count; m++) {
        if (!a->methods[m - 1].excluded || a->methods[m - 1].owner != m)
            continue;
        struct ppdb_point *pts;
        uint32_t n;
        const char *reason;
        if (ppdb_sequence_points(&a->pdb, m, &pts, &n, &reason) < 0)
            continue;
        uint32_t doc = 0, first = 0, last = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (pts[i].start_line == PPDB_HIDDEN_LINE)
                continue;
            if (doc && pts[i].document != doc)
                break;
            if (!doc || pts[i].start_line < first)
                first = pts[i].start_line;
            if (!doc || pts[i].end_line > last)
                last = pts[i].end_line;
            doc = pts[i].document;
        }
        mem_free(pts);
        if (doc && add_span(a, doc, first, last, &cap) < 0)
            return -1;
    }
    return 0;
}

/* "Namespace.Name" of a TypeDef or TypeRef row (not nested types' outer
 * names: enough to recognise the framework's types). */
static void plain_type_name(const struct assembly *a, enum md_table table, uint32_t row,
                            char *out, size_t size)
{
    out[0] = '\0';
    if (table == MD_TYPEDEF && row && row <= a->type_count) {
        assembly_type_name(a, row, out, size);
    } else if (table == MD_TYPEREF) {
        const char *ns = md_string(&a->md, md_get(&a->md, MD_TYPEREF, row, MD_TYPEREF_NAMESPACE));
        const char *name = md_string(&a->md, md_get(&a->md, MD_TYPEREF, row, MD_TYPEREF_NAME));
        snprintf(out, size, "%s%s%s", ns, ns[0] ? "." : "", name);
    }
}

/* The name of a TypeDefOrRef coded index, a TypeSpec of a generic
 * instance named by its generic type. */
static void coded_type_name(const struct assembly *a, enum md_coded kind, uint32_t coded,
                            char *out, size_t size)
{
    enum md_table table;
    uint32_t row;
    out[0] = '\0';
    if (md_coded(kind, coded, &table, &row) < 0)
        return;
    if (table == MD_TYPESPEC) {
        const uint8_t *sig;
        uint32_t len;
        if (md_blob(&a->md, md_get(&a->md, MD_TYPESPEC, row, MD_TYPESPEC_SIGNATURE), &sig, &len) < 0 ||
            len < 3 || sig[0] != 0x15 /* GENERICINST */)
            return;
        const uint8_t *p = sig + 2;
        uint32_t encoded;
        if (md_uncompress(&p, sig + len, &encoded) < 0)
            return;
        static const enum md_table tables[] = {MD_TYPEDEF, MD_TYPEREF, MD_TYPESPEC};
        if ((encoded & 3) < 2)
            plain_type_name(a, tables[encoded & 3], encoded >> 2, out, size);
        return;
    }
    plain_type_name(a, table, row, out, size);
}

const char *assembly_member(const struct assembly *a, uint32_t token, char *type, size_t type_size)
{
    uint32_t row = token & 0xffffff;
    if (type_size)
        type[0] = '\0';
    switch (token >> 24) {
    case MD_METHODDEF:
        if (row && row <= a->method_count && type_size)
            assembly_type_name(a, a->methods[row - 1].type, type, type_size);
        return assembly_method_name(a, row);
    case MD_METHODSPEC: {
        enum md_table table;
        uint32_t r;
        if (md_coded(MD_CODED_METHODDEFORREF, md_get(&a->md, MD_METHODSPEC, row, MD_METHODSPEC_METHOD),
                     &table, &r) < 0)
            return "";
        return assembly_member(a, md_token(table, r), type, type_size);
    }
    case MD_MEMBERREF:
        if (type_size)
            coded_type_name(a, MD_CODED_MEMBERREFPARENT,
                            md_get(&a->md, MD_MEMBERREF, row, MD_MEMBERREF_CLASS), type, type_size);
        return md_string(&a->md, md_get(&a->md, MD_MEMBERREF, row, MD_MEMBERREF_NAME));
    case MD_FIELD:
        if (type_size)
            for (uint32_t t = 1; t <= a->type_count; t++) {
                uint32_t first = md_get(&a->md, MD_TYPEDEF, t, MD_TYPEDEF_FIELDLIST);
                uint32_t next = t < a->type_count ? md_get(&a->md, MD_TYPEDEF, t + 1, MD_TYPEDEF_FIELDLIST)
                                                  : md_rows(&a->md, MD_FIELD) + 1;
                if (row >= first && row < next) {
                    assembly_type_name(a, t, type, type_size);
                    break;
                }
            }
        return md_string(&a->md, md_get(&a->md, MD_FIELD, row, MD_FIELD_NAME));
    default:
        return "";
    }
}

void assembly_field_type(const struct assembly *a, uint32_t token, char *out, size_t size)
{
    out[0] = '\0';
    uint32_t row = token & 0xffffff, blob = 0;
    if ((token >> 24) == MD_FIELD)
        blob = md_get(&a->md, MD_FIELD, row, MD_FIELD_SIGNATURE);
    else if ((token >> 24) == MD_MEMBERREF)
        blob = md_get(&a->md, MD_MEMBERREF, row, MD_MEMBERREF_SIGNATURE);
    const uint8_t *sig;
    uint32_t len;
    if (!blob || md_blob(&a->md, blob, &sig, &len) < 0 || len < 2 || sig[0] != 0x06)
        return;
    const uint8_t *p = sig + 1, *end = sig + len;
    while (p < end && (*p == 0x1f || *p == 0x20)) { /* custom modifiers */
        uint32_t skip;
        p++;
        if (md_uncompress(&p, end, &skip) < 0)
            return;
    }
    if (p >= end)
        return;
    if (*p == 0x1c) {
        snprintf(out, size, "System.Object");
        return;
    }
    if (*p == 0x15 && end - p >= 2)
        p++;
    if (*p != 0x11 && *p != 0x12)
        return;
    p++;
    uint32_t encoded;
    if (md_uncompress(&p, end, &encoded) < 0)
        return;
    static const enum md_table tables[] = {MD_TYPEDEF, MD_TYPEREF, MD_TYPESPEC};
    if ((encoded & 3) < 2)
        plain_type_name(a, tables[encoded & 3], encoded >> 2, out, size);
}

int assembly_field_generated(const struct assembly *a, uint32_t token)
{
    uint32_t row = token & 0xffffff;
    if ((token >> 24) == MD_FIELD) {
        for (uint32_t t = 1; t <= a->type_count; t++) {
            uint32_t first = md_get(&a->md, MD_TYPEDEF, t, MD_TYPEDEF_FIELDLIST);
            uint32_t next = t < a->type_count ? md_get(&a->md, MD_TYPEDEF, t + 1, MD_TYPEDEF_FIELDLIST)
                                              : md_rows(&a->md, MD_FIELD) + 1;
            if (row >= first && row < next)
                return a->types[t - 1].generated;
        }
        return 0;
    }
    if ((token >> 24) == MD_MEMBERREF) {
        enum md_table table;
        uint32_t r;
        if (md_coded(MD_CODED_MEMBERREFPARENT, md_get(&a->md, MD_MEMBERREF, row, MD_MEMBERREF_CLASS),
                     &table, &r) < 0)
            return 0;
        if (table == MD_TYPEDEF)
            return r && r <= a->type_count && a->types[r - 1].generated;
        char name[256];
        coded_type_name(a, MD_CODED_MEMBERREFPARENT, md_get(&a->md, MD_MEMBERREF, row, MD_MEMBERREF_CLASS),
                        name, sizeof name);
        const char *last = strrchr(name, '+');
        last = last ? last + 1 : strrchr(name, '.') ? strrchr(name, '.') + 1 : name;
        return last[0] == '<';
    }
    return 0;
}

/* The state machines: which interfaces each type implements. */
static void find_machines(struct assembly *a)
{
    for (uint32_t r = 1; r <= md_rows(&a->md, MD_INTERFACEIMPL); r++) {
        uint32_t t = md_get(&a->md, MD_INTERFACEIMPL, r, MD_INTERFACEIMPL_CLASS);
        if (!t || t > a->type_count)
            continue;
        char name[256];
        coded_type_name(a, MD_CODED_TYPEDEFORREF,
                        md_get(&a->md, MD_INTERFACEIMPL, r, MD_INTERFACEIMPL_INTERFACE), name, sizeof name);
        if (!strcmp(name, "System.Runtime.CompilerServices.IAsyncStateMachine"))
            a->types[t - 1].machine |= ASSEMBLY_MACHINE_ASYNC;
        else if (!strcmp(name, "System.Collections.IEnumerator"))
            a->types[t - 1].machine |= ASSEMBLY_MACHINE_ITERATOR;
        else if (!strcmp(name, "System.Collections.Generic.IAsyncEnumerator`1"))
            a->types[t - 1].machine |= ASSEMBLY_MACHINE_ASYNC_ITERATOR;
    }
}

static int analyse(struct assembly *a)
{
    a->type_count = md_rows(&a->md, MD_TYPEDEF);
    a->method_count = md_rows(&a->md, MD_METHODDEF);
    a->types = mem_calloc(a->type_count + 1, sizeof *a->types);
    a->methods = mem_calloc(a->method_count + 1, sizeof *a->methods);
    uint32_t props = md_rows(&a->md, MD_PROPERTY);
    uint8_t *prop_excluded = mem_calloc(props + 1, 1);
    if (!a->types || !a->methods || !prop_excluded) {
        mem_free(prop_excluded);
        return -1;
    }
    /* each type's methods: from its MethodList to the next type's */
    for (uint32_t t = 1; t <= a->type_count; t++) {
        uint32_t first = md_get(&a->md, MD_TYPEDEF, t, MD_TYPEDEF_METHODLIST);
        uint32_t end = t < a->type_count ? md_get(&a->md, MD_TYPEDEF, t + 1, MD_TYPEDEF_METHODLIST)
                                         : a->method_count + 1;
        if (end > a->method_count + 1)
            end = a->method_count + 1;
        for (uint32_t m = first; m && m < end; m++)
            a->methods[m - 1].type = t;
        a->types[t - 1].first_method = first && first < end ? first : 0;
        a->types[t - 1].end_method = first && first < end ? end : 0;
        const char *name = md_string(&a->md, md_get(&a->md, MD_TYPEDEF, t, MD_TYPEDEF_NAME));
        a->types[t - 1].generated = name[0] == '<';
    }
    for (uint32_t r = 1; r <= md_rows(&a->md, MD_NESTEDCLASS); r++) {
        uint32_t nested = md_get(&a->md, MD_NESTEDCLASS, r, MD_NESTEDCLASS_NESTED);
        uint32_t outer = md_get(&a->md, MD_NESTEDCLASS, r, MD_NESTEDCLASS_ENCLOSING);
        if (nested && nested <= a->type_count && outer <= a->type_count && outer != nested)
            a->types[nested - 1].enclosing = outer;
    }
    /* the attributes that matter here */
    for (uint32_t r = 1; r <= md_rows(&a->md, MD_CUSTOMATTRIBUTE); r++) {
        const char *name = attribute_name(a, md_get(&a->md, MD_CUSTOMATTRIBUTE, r,
                                                    MD_CUSTOMATTRIBUTE_TYPE));
        int exclude = is_exclude_attribute(name);
        int generated = !strcmp(name, "CompilerGeneratedAttribute");
        if (!exclude && !generated)
            continue;
        enum md_table table;
        uint32_t row;
        if (md_coded(MD_CODED_HASCUSTOMATTRIBUTE,
                     md_get(&a->md, MD_CUSTOMATTRIBUTE, r, MD_CUSTOMATTRIBUTE_PARENT), &table,
                     &row) < 0 || row == 0)
            continue;
        if (table == MD_METHODDEF && row <= a->method_count) {
            a->methods[row - 1].excluded |= (uint8_t)exclude;
            a->methods[row - 1].generated |= (uint8_t)generated;
        } else if (table == MD_TYPEDEF && row <= a->type_count) {
            a->types[row - 1].excluded |= (uint8_t)exclude;
            a->types[row - 1].generated |= (uint8_t)generated;
        } else if (table == MD_PROPERTY && row <= props) {
            prop_excluded[row] |= (uint8_t)exclude;
        }
    }
    for (uint32_t r = 1; r <= md_rows(&a->md, MD_METHODSEMANTICS); r++) {
        uint32_t sem = md_get(&a->md, MD_METHODSEMANTICS, r, MD_METHODSEMANTICS_SEMANTICS);
        uint32_t m = md_get(&a->md, MD_METHODSEMANTICS, r, MD_METHODSEMANTICS_METHOD);
        enum md_table table;
        uint32_t row;
        if (!(sem & 0x3) || !m || m > a->method_count ||
            md_coded(MD_CODED_HASSEMANTICS,
                     md_get(&a->md, MD_METHODSEMANTICS, r, MD_METHODSEMANTICS_ASSOCIATION), &table,
                     &row) < 0 || table != MD_PROPERTY)
            continue;
        a->methods[m - 1].accessor = 1;
        if (row <= props && prop_excluded[row])
            a->methods[m - 1].excluded = 1;
    }
    mem_free(prop_excluded);
    find_machines(a);
    /* a type is excluded with its enclosing types; its user type is the
     * nearest one the compiler did not generate (bounded: the table may
     * hold a cycle) */
    for (uint32_t t = 1; t <= a->type_count; t++) {
        struct assembly_type *at = &a->types[t - 1];
        at->user = t;
        uint32_t cur = t;
        for (uint32_t depth = 0; cur && depth < 64; depth++) {
            const struct assembly_type *c = &a->types[cur - 1];
            at->excluded |= c->excluded;
            if (at->user == cur && c->generated && c->enclosing)
                at->user = c->enclosing;
            cur = c->enclosing;
        }
    }
    int has_pdb = assembly_has_pdb(a);
    for (uint32_t m = 1; m <= a->method_count; m++) {
        struct assembly_method *am = &a->methods[m - 1];
        if (has_pdb)
            am->kickoff = ppdb_kickoff(&a->pdb, m);
        if (am->kickoff > a->method_count)
            am->kickoff = 0;
    }
    for (uint32_t m = 1; m <= a->method_count; m++) {
        struct assembly_method *am = &a->methods[m - 1];
        if (!am->type) {
            am->owner = m;
            continue;
        }
        am->generated |= a->types[am->type - 1].generated;
        am->owner = owner_of(a, m);
        if (am->owner != m)
            am->generated = 1;
        am->excluded |= a->types[am->type - 1].excluded;
    }
    /* an owner may itself be generated (a local function's state machine
     * belongs to the local function, which belongs to its method): follow
     * to the user's method (bounded: names may point in circles) */
    for (uint32_t m = 1; m <= a->method_count; m++) {
        struct assembly_method *am = &a->methods[m - 1];
        for (int depth = 0; depth < 8 && am->owner != m; depth++) {
            uint32_t next = a->methods[am->owner - 1].owner;
            if (next == am->owner || next == m)
                break;
            am->owner = next;
        }
    }
    /* what the user method excludes, its generated parts are out with it */
    for (uint32_t m = 1; m <= a->method_count; m++) {
        struct assembly_method *am = &a->methods[m - 1];
        if (am->owner != m && a->methods[am->owner - 1].excluded)
            am->excluded = 1;
    }
    if (has_pdb && excluded_spans(a) < 0)
        return -1;
    return 0;
}

int assembly_load(struct assembly *a, const uint8_t *image, size_t size, const uint8_t *pdb,
                  size_t pdb_size, char *why, size_t why_size)
{
    memset(a, 0, sizeof *a);
    if (load_image(a, image, size, why, why_size) < 0)
        return -1;
    if (load_embedded(a) < 0 && pdb && a->pdb_state != ASSEMBLY_PDB_BAD)
        attach_pdb(a, pdb, pdb_size, ASSEMBLY_PDB_FILE);
    if (analyse(a) < 0) {
        assembly_close(a);
        return set_why(why, why_size, "out of memory");
    }
    return 0;
}

/* Maps a whole file read-only.  Returns the mapping (size in *size), or
 * NULL with errno. */
static uint8_t *map_file(const char *path, size_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
        int e = S_ISREG(st.st_mode) ? EINVAL : EISDIR;
        close(fd);
        errno = e;
        return NULL;
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return NULL;
    *size = (size_t)st.st_size;
    return p;
}

static void copy_path(char dst[PATH_MAX], const char *src)
{
    size_t n = strnlen(src, PATH_MAX - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Looks for the PDB file the assembly names: beside it, at the CodeView
 * path, and as NAME.pdb beside it. */
static void find_pdb_file(struct assembly *a, const char *path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[1] = '\0';
    else
        dir[0] = '\0';
    char candidates[3][PATH_MAX];
    int n = 0;
    if (a->debug.codeview && a->debug.pdb_path[0]) {
        const char *cv = a->debug.pdb_path;
        const char *base = cv;
        for (const char *p = cv; *p; p++)
            if (*p == '/' || *p == '\\')
                base = p + 1;
        if (snprintf(candidates[n], PATH_MAX, "%s%s", dir, base) < PATH_MAX)
            n++;
        if (cv[0] == '/' && snprintf(candidates[n], PATH_MAX, "%s", cv) < PATH_MAX)
            n++;
    }
    const char *file = slash ? strrchr(path, '/') + 1 : path;
    const char *dot = strrchr(file, '.');
    size_t stem = dot ? (size_t)(dot - file) : strlen(file);
    if (snprintf(candidates[n], PATH_MAX, "%s%.*s.pdb", dir, (int)stem, file) < PATH_MAX)
        n++;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int k = 0; k < i; k++)
            seen |= !strcmp(candidates[k], candidates[i]);
        size_t size;
        uint8_t *data = seen ? NULL : map_file(candidates[i], &size);
        if (!data)
            continue;
        if (attach_pdb(a, data, size, ASSEMBLY_PDB_FILE) == 0) {
            a->pdb_data = data;
            a->pdb_size = size;
            a->pdb_mapped = 1;
            copy_path(a->pdb_path, candidates[i]);
            return;
        }
        copy_path(a->pdb_path, candidates[i]);
        munmap(data, size);
    }
}

int assembly_open(struct assembly *a, const char *path, char *why, size_t why_size)
{
    memset(a, 0, sizeof *a);
    size_t size;
    uint8_t *image = map_file(path, &size);
    if (!image) {
        if (why && why_size)
            snprintf(why, why_size, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    if (load_image(a, image, size, why, why_size) < 0) {
        munmap(image, size);
        memset(a, 0, sizeof *a);
        return -1;
    }
    a->image_mapped = 1;
    if (load_embedded(a) < 0 && a->pdb_state != ASSEMBLY_PDB_BAD)
        find_pdb_file(a, path);
    if (analyse(a) < 0) {
        assembly_close(a);
        return set_why(why, why_size, "out of memory");
    }
    return 0;
}

void assembly_close(struct assembly *a)
{
    if (a->image_mapped && a->image)
        munmap((void *)a->image, a->image_size);
    if (a->pdb_data) {
        if (a->pdb_mapped)
            munmap(a->pdb_data, a->pdb_size);
        else
            mem_free(a->pdb_data);
    }
    mem_free(a->types);
    mem_free(a->methods);
    mem_free(a->excluded_spans);
    memset(a, 0, sizeof *a);
}

/* ---- names and bodies ---------------------------------------------------------- */

void assembly_type_name(const struct assembly *a, uint32_t type, char *out, size_t size)
{
    if (!size)
        return;
    out[0] = '\0';
    if (type == 0 || type > a->type_count)
        return;
    /* outermost first: collect the chain (bounded) */
    uint32_t chain[16];
    int n = 0;
    for (uint32_t t = type; t && n < 16; t = a->types[t - 1].enclosing)
        chain[n++] = t;
    size_t used = 0;
    for (int i = n - 1; i >= 0 && used + 1 < size; i--) {
        const char *ns = md_string(&a->md, md_get(&a->md, MD_TYPEDEF, chain[i], MD_TYPEDEF_NAMESPACE));
        const char *name = md_string(&a->md, md_get(&a->md, MD_TYPEDEF, chain[i], MD_TYPEDEF_NAME));
        int k = i == n - 1 ? snprintf(out + used, size - used, "%s%s%s", ns, ns[0] ? "." : "", name)
                           : snprintf(out + used, size - used, "+%s", name);
        if (k < 0)
            break;
        used += (size_t)k;
        if (used >= size)
            used = size - 1;
    }
}

const char *assembly_method_name(const struct assembly *a, uint32_t method)
{
    return md_string(&a->md, md_get(&a->md, MD_METHODDEF, method, MD_METHODDEF_NAME));
}

const uint8_t *assembly_method_body(const struct assembly *a, uint32_t method, size_t *avail)
{
    uint32_t rva = md_get(&a->md, MD_METHODDEF, method, MD_METHODDEF_RVA);
    return rva ? pe_at_rva(&a->pe, rva, avail) : NULL;
}

int assembly_line_excluded(const struct assembly *a, uint32_t document, uint32_t line)
{
    for (uint32_t i = 0; i < a->excluded_span_count; i++) {
        const struct assembly_span *s = &a->excluded_spans[i];
        if (s->document == document && line >= s->first_line && line <= s->last_line)
            return 1;
    }
    return 0;
}
