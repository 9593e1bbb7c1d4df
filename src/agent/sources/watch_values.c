/*
 * watch_values: how live probes read and show a value of each type, the
 * plan decided from the method's signature and the module's metadata when
 * the method is taken (no runtime call): primitives, strings, arrays and
 * their first elements, other references by their runtime type, byref /
 * `in` / `out` arguments through their pointer, the framework's value
 * types whose layout is fixed (Decimal, DateTime, TimeSpan, Guid,
 * Span<T> and ReadOnlySpan<T>), and enums by their constants' names: the
 * module's own, and those of other assemblies (a TypeRef followed to the
 * assembly file that defines it, through type forwarders: DayOfWeek's
 * System.Runtime -> System.Private.CoreLib).  And the pure formatters of those values (unit
 * tested): ISO 8601 dates from ticks, TimeSpan's "c" format, Guids,
 * enum names and [Flags] combinations.
 *
 * Nothing here runs the program's code: every value is shown from bytes
 * the probe copied (watch_probe.c).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/sources/watch.h"
#include "common/mem.h"
#include "common/pdb/meta.h"

struct watch_enum watch_enums[WATCH_MAX_ENUMS];

/* The enums filled so far: (assembly, TypeDef row) -> index. */
static struct {
    const struct assembly *a;
    uint32_t row;
} enum_keys[WATCH_MAX_ENUMS];
static uint32_t enum_count;

static const uint8_t primitive_sizes[] = {
    [SIG_BOOL] = 1, [SIG_I1] = 1, [SIG_U1] = 1, [SIG_CHAR] = 2, [SIG_I2] = 2, [SIG_U2] = 2,
    [SIG_I4] = 4, [SIG_U4] = 4, [SIG_R4] = 4, [SIG_I8] = 8, [SIG_U8] = 8, [SIG_R8] = 8,
    [SIG_I] = 8, [SIG_U] = 8, [SIG_POINTER] = 8,
};

const char *watch_keyword(uint8_t kind)
{
    static const char *const keywords[] = {
        [SIG_BOOL] = "bool", [SIG_CHAR] = "char", [SIG_I1] = "sbyte", [SIG_U1] = "byte",
        [SIG_I2] = "short", [SIG_U2] = "ushort", [SIG_I4] = "int", [SIG_U4] = "uint",
        [SIG_I8] = "long", [SIG_U8] = "ulong", [SIG_R4] = "float", [SIG_R8] = "double",
        [SIG_I] = "nint", [SIG_U] = "nuint", [SIG_STRING] = "string",
    };
    return kind < sizeof keywords / sizeof keywords[0] ? keywords[kind] : NULL;
}

static int is_primitive(uint8_t kind)
{
    return kind >= SIG_BOOL && kind <= SIG_U;
}

/* Is a TypeDef/TypeRef token the type ns.name? */
static int type_is(const struct assembly *a, uint32_t token, const char *ns, const char *name)
{
    uint32_t row = token & 0xffffff;
    enum md_table table = (enum md_table)(token >> 24);
    if (table == MD_TYPEREF && row && row <= md_rows(&a->md, MD_TYPEREF))
        return !strcmp(md_string(&a->md, md_get(&a->md, MD_TYPEREF, row, MD_TYPEREF_NAMESPACE)), ns) &&
               !strcmp(md_string(&a->md, md_get(&a->md, MD_TYPEREF, row, MD_TYPEREF_NAME)), name);
    if (table == MD_TYPEDEF && row && row <= md_rows(&a->md, MD_TYPEDEF))
        return !strcmp(md_string(&a->md, md_get(&a->md, MD_TYPEDEF, row, MD_TYPEDEF_NAMESPACE)), ns) &&
               !strcmp(md_string(&a->md, md_get(&a->md, MD_TYPEDEF, row, MD_TYPEDEF_NAME)), name);
    return 0;
}

/* Is a coded TypeDefOrRef the type ns.name? */
static int coded_type_is(const struct assembly *a, enum md_coded kind, uint32_t coded,
                         const char *ns, const char *name)
{
    enum md_table table;
    uint32_t row;
    if (md_coded(kind, coded, &table, &row) < 0)
        return 0;
    return type_is(a, md_token(table, row), ns, name);
}

int watch_field_type(const struct assembly *a, uint32_t row, struct sig_type *t)
{
    const uint8_t *blob;
    uint32_t len;
    if (!row || row > md_rows(&a->md, MD_FIELD) ||
        md_blob(&a->md, md_get(&a->md, MD_FIELD, row, MD_FIELD_SIGNATURE), &blob, &len) < 0 ||
        len < 2 || blob[0] != 0x06)
        return -1;
    const uint8_t *p = blob + 1;
    return sig_type(&p, blob + len, t);
}

/* Does TypeDef row carry [System.Flags]? */
static int has_flags_attribute(const struct assembly *a, uint32_t row)
{
    for (uint32_t c = 1; c <= md_rows(&a->md, MD_CUSTOMATTRIBUTE); c++) {
        enum md_table pt, ct;
        uint32_t prow, crow;
        if (md_coded(MD_CODED_HASCUSTOMATTRIBUTE,
                     md_get(&a->md, MD_CUSTOMATTRIBUTE, c, MD_CUSTOMATTRIBUTE_PARENT), &pt, &prow) < 0 ||
            pt != MD_TYPEDEF || prow != row)
            continue;
        if (md_coded(MD_CODED_CUSTOMATTRIBUTETYPE,
                     md_get(&a->md, MD_CUSTOMATTRIBUTE, c, MD_CUSTOMATTRIBUTE_TYPE), &ct, &crow) < 0 ||
            ct != MD_MEMBERREF || !crow || crow > md_rows(&a->md, MD_MEMBERREF))
            continue;
        if (coded_type_is(a, MD_CODED_MEMBERREFPARENT,
                          md_get(&a->md, MD_MEMBERREF, crow, MD_MEMBERREF_CLASS), "System",
                          "FlagsAttribute"))
            return 1;
    }
    return 0;
}

/* The constant of Field row f, as a signed 64-bit value of an enum whose
 * underlying type is `kind`.  Returns 0, or -1 when it has none. */
static int field_constant(const struct assembly *a, uint32_t f, uint8_t kind, int64_t *value)
{
    for (uint32_t c = 1; c <= md_rows(&a->md, MD_CONSTANT); c++) {
        enum md_table t;
        uint32_t row;
        if (md_coded(MD_CODED_HASCONSTANT, md_get(&a->md, MD_CONSTANT, c, 1), &t, &row) < 0 ||
            t != MD_FIELD || row != f)
            continue;
        const uint8_t *blob;
        uint32_t len;
        if (md_blob(&a->md, md_get(&a->md, MD_CONSTANT, c, 2), &blob, &len) < 0)
            return -1;
        uint8_t size = kind < sizeof primitive_sizes ? primitive_sizes[kind] : 0;
        if (!size || len < size)
            return -1;
        uint64_t u = 0;
        memcpy(&u, blob, size);
        int signed_kind = kind == SIG_I1 || kind == SIG_I2 || kind == SIG_I4 || kind == SIG_I8;
        if (signed_kind && size < 8 && (u >> (size * 8 - 1)) & 1)
            u |= ~0ull << (size * 8);
        *value = (int64_t)u;
        return 0;
    }
    return -1;
}

/* The enum table and the other assemblies read are filled by the thread
 * matching a module's methods and by the loop (--fields): one lock, no
 * runtime call or log line under it. */
static pthread_mutex_t values_lock = PTHREAD_MUTEX_INITIALIZER;

static int enum_of_locked(const struct assembly *a, uint32_t row, uint16_t *index, uint8_t *kind);

/* The Field rows [first, end) of TypeDef row (a valid row). */
static void field_rows(const struct assembly *a, uint32_t row, uint32_t *first, uint32_t *end)
{
    uint32_t fields = md_rows(&a->md, MD_FIELD);
    *first = md_get(&a->md, MD_TYPEDEF, row, MD_TYPEDEF_FIELDLIST);
    *end = row < md_rows(&a->md, MD_TYPEDEF) ? md_get(&a->md, MD_TYPEDEF, row + 1, MD_TYPEDEF_FIELDLIST)
                                             : fields + 1;
    if (*end > fields + 1)
        *end = fields + 1;
}

/* An enum TypeDef row of a's: its index in watch_enums (filled once) and
 * its underlying kind.  Returns 0, or -1 when the type is not an enum (or
 * the table is full). */
static int enum_of(const struct assembly *a, uint32_t row, uint16_t *index, uint8_t *kind)
{
    pthread_mutex_lock(&values_lock);
    int rc = enum_of_locked(a, row, index, kind);
    pthread_mutex_unlock(&values_lock);
    return rc;
}

static int enum_of_locked(const struct assembly *a, uint32_t row, uint16_t *index, uint8_t *kind)
{
    uint32_t types = md_rows(&a->md, MD_TYPEDEF);
    if (!row || row > types ||
        !coded_type_is(a, MD_CODED_TYPEDEFORREF, md_get(&a->md, MD_TYPEDEF, row, MD_TYPEDEF_EXTENDS),
                       "System", "Enum"))
        return -1;
    uint32_t first, end;
    field_rows(a, row, &first, &end);
    uint8_t underlying = SIG_VOID;
    for (uint32_t f = first; f && f < end; f++) {
        if (md_get(&a->md, MD_FIELD, f, MD_FIELD_FLAGS) & 0x10) /* static: a constant */
            continue;
        struct sig_type t;
        if (watch_field_type(a, f, &t) < 0)
            return -1;
        underlying = t.kind;
        break;
    }
    if (underlying < SIG_I1 || underlying > SIG_U8 || underlying == SIG_CHAR)
        return -1;
    *kind = underlying;
    for (uint32_t i = 0; i < enum_count; i++)
        if (enum_keys[i].a == a && enum_keys[i].row == row) {
            *index = (uint16_t)i;
            return 0;
        }
    if (enum_count >= WATCH_MAX_ENUMS)
        return -1;
    struct watch_enum *e = &watch_enums[enum_count];
    memset(e, 0, sizeof *e);
    e->flags = (uint8_t)has_flags_attribute(a, row);
    for (uint32_t f = first; f && f < end && e->count < WATCH_ENUM_NAMES; f++) {
        if (!(md_get(&a->md, MD_FIELD, f, MD_FIELD_FLAGS) & 0x40)) /* literal */
            continue;
        int64_t v;
        if (field_constant(a, f, underlying, &v) < 0)
            continue;
        e->values[e->count] = v;
        snprintf(e->names[e->count], sizeof e->names[0], "%s",
                 md_string(&a->md, md_get(&a->md, MD_FIELD, f, MD_FIELD_NAME)));
        e->count++;
    }
    enum_keys[enum_count].a = a;
    enum_keys[enum_count].row = row;
    *index = (uint16_t)enum_count++;
    return 0;
}

/* ---- types of other assemblies ---------------------------------------------------------- */

#define MAX_DIRS 8
#define MAX_OTHERS 16

/* The folders modules were loaded from (the program's, the framework's):
 * where an assembly a TypeRef names is looked for, as NAME.dll. */
static char dirs[MAX_DIRS][PATH_MAX];
static uint32_t dir_count;
/* The assemblies read for their types, never closed (watch_enums' keys
 * point to them). */
static struct {
    char name[128];
    struct assembly *a;
} others[MAX_OTHERS];
static uint32_t other_count;

void watch_values_module_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path || (size_t)(slash - path) >= PATH_MAX)
        return;
    pthread_mutex_lock(&values_lock);
    int known = 0;
    for (uint32_t i = 0; i < dir_count; i++)
        known |= strlen(dirs[i]) == (size_t)(slash - path) && !strncmp(dirs[i], path, (size_t)(slash - path));
    if (!known && dir_count < MAX_DIRS) {
        memcpy(dirs[dir_count], path, (size_t)(slash - path));
        dirs[dir_count][slash - path] = '\0';
        dir_count++;
    }
    pthread_mutex_unlock(&values_lock);
}

/* The assembly of that simple name, read from a module folder (once);
 * NULL when none is.  values_lock held. */
static const struct assembly *assembly_named(const char *name)
{
    for (uint32_t i = 0; i < other_count; i++)
        if (!strcmp(others[i].name, name))
            return others[i].a;
    if (other_count == MAX_OTHERS || strlen(name) >= sizeof others[0].name || strchr(name, '/'))
        return NULL;
    struct assembly *found = NULL;
    for (uint32_t d = 0; d < dir_count && !found; d++) {
        char path[PATH_MAX + 160];
        snprintf(path, sizeof path, "%s/%s.dll", dirs[d], name);
        if (access(path, R_OK) != 0)
            continue;
        struct assembly *b = mem_calloc(1, sizeof *b);
        char why[160];
        if (b && assembly_open(b, path, why, sizeof why) == 0)
            found = b;
        else
            mem_free(b);
    }
    if (found) { /* not found: looked for again (a folder may come later) */
        snprintf(others[other_count].name, sizeof others[0].name, "%s", name);
        others[other_count++].a = found;
    }
    return found;
}

/* The TypeDef named ns.name in b, or where b forwards it (ExportedType),
 * at most 3 assemblies on.  Returns 0 with *out and *row, or -1.
 * values_lock held. */
static int find_type(const struct assembly *b, const char *ns, const char *name, int depth,
                     const struct assembly **out, uint32_t *row)
{
    if (!b || depth > 3)
        return -1;
    for (uint32_t r = 1; r <= md_rows(&b->md, MD_TYPEDEF); r++)
        if (!strcmp(md_string(&b->md, md_get(&b->md, MD_TYPEDEF, r, MD_TYPEDEF_NAME)), name) &&
            !strcmp(md_string(&b->md, md_get(&b->md, MD_TYPEDEF, r, MD_TYPEDEF_NAMESPACE)), ns)) {
            *out = b;
            *row = r;
            return 0;
        }
    for (uint32_t r = 1; r <= md_rows(&b->md, MD_EXPORTEDTYPE); r++) {
        if (strcmp(md_string(&b->md, md_get(&b->md, MD_EXPORTEDTYPE, r, 2)), name) ||
            strcmp(md_string(&b->md, md_get(&b->md, MD_EXPORTEDTYPE, r, 3)), ns))
            continue;
        enum md_table t;
        uint32_t ref;
        if (md_coded(MD_CODED_IMPLEMENTATION, md_get(&b->md, MD_EXPORTEDTYPE, r, 4), &t, &ref) < 0 ||
            t != MD_ASSEMBLYREF || !ref || ref > md_rows(&b->md, MD_ASSEMBLYREF))
            return -1;
        const char *to = md_string(&b->md, md_get(&b->md, MD_ASSEMBLYREF, ref, MD_ASSEMBLYREF_NAME));
        return find_type(assembly_named(to), ns, name, depth + 1, out, row);
    }
    return -1;
}

/* An enum of another assembly, named by TypeRef row of a's: its index in
 * watch_enums and underlying kind.  Returns 0, or -1 (not found, not an
 * enum, nested in a type). */
static int enum_elsewhere(const struct assembly *a, uint32_t row, uint16_t *index, uint8_t *kind)
{
    if (!row || row > md_rows(&a->md, MD_TYPEREF))
        return -1;
    enum md_table t;
    uint32_t scope;
    if (md_coded(MD_CODED_RESOLUTIONSCOPE, md_get(&a->md, MD_TYPEREF, row, MD_TYPEREF_SCOPE), &t,
                 &scope) < 0 ||
        t != MD_ASSEMBLYREF || !scope || scope > md_rows(&a->md, MD_ASSEMBLYREF))
        return -1;
    const char *assembly = md_string(&a->md, md_get(&a->md, MD_ASSEMBLYREF, scope, MD_ASSEMBLYREF_NAME));
    const char *ns = md_string(&a->md, md_get(&a->md, MD_TYPEREF, row, MD_TYPEREF_NAMESPACE));
    const char *name = md_string(&a->md, md_get(&a->md, MD_TYPEREF, row, MD_TYPEREF_NAME));
    pthread_mutex_lock(&values_lock);
    const struct assembly *b = NULL;
    uint32_t def = 0;
    int rc = find_type(assembly_named(assembly), ns, name, 0, &b, &def);
    if (rc == 0)
        rc = enum_of_locked(b, def, index, kind);
    pthread_mutex_unlock(&values_lock);
    return rc;
}

/* The type after a type's custom modifiers and its first element-type
 * byte `lead` (BYREF 0x10, SZARRAY 0x1d): a byref's target, an array's
 * element. */
static int inner_type(const struct sig_type *t, uint8_t lead, struct sig_type *inner)
{
    const uint8_t *p = t->bytes, *end = t->bytes + t->len;
    while (p < end && (*p == 0x1f || *p == 0x20)) {
        uint32_t skip;
        p++;
        if (md_uncompress(&p, end, &skip) < 0)
            return -1;
    }
    if (p >= end || *p != lead)
        return -1;
    p++;
    return sig_type(&p, end, inner);
}

/* System's value types shown by value, by name in the namespace System
 * (watch.h). */
const struct watch_fixed_type watch_fixed_types[] = {
    {"Decimal", 16, WATCH_SHOW_DECIMAL}, {"DateTime", 8, WATCH_SHOW_DATETIME},
    {"TimeSpan", 8, WATCH_SHOW_TIMESPAN}, {"Guid", 16, WATCH_SHOW_GUID},
    {"Span`1", 16, WATCH_SHOW_SPAN},      {"ReadOnlySpan`1", 16, WATCH_SHOW_SPAN},
    {NULL, 0, 0},
};

void watch_plan_value(const struct assembly *a, const struct sig_type *t, int out,
                      struct watch_value *v)
{
    struct sig_type inner;
    v->read = WATCH_READ_NONE;
    v->size = 0;
    v->show = WATCH_SHOW_PLAIN;
    v->byref = 0;
    v->elem_kind = SIG_VOID;
    v->kind = t->kind;
    if (t->kind == SIG_BYREF) {
        if (inner_type(t, 0x10, &inner) < 0)
            return;
        v->byref = 1;
        if (out) {
            v->read = WATCH_READ_OUT;
            return;
        }
        t = &inner;
        v->kind = t->kind;
    }
    uint8_t k = t->kind;
    if (k < sizeof primitive_sizes && primitive_sizes[k]) {
        v->read = WATCH_READ_BYTES;
        v->size = primitive_sizes[k];
    } else if (k == SIG_STRING) {
        v->read = WATCH_READ_STRING;
    } else if (k == SIG_OBJECT && t->array) {
        v->read = WATCH_READ_ARRAY;
        struct sig_type elem;
        if (inner_type(t, 0x1d, &elem) == 0) {
            if (elem.kind == SIG_STRING)
                v->read = WATCH_READ_STRINGS;
            else if (is_primitive(elem.kind))
                v->elem_kind = elem.kind;
        }
    } else if (k == SIG_OBJECT) {
        v->read = WATCH_READ_REF;
    } else if (k == SIG_GENERIC) {
        /* !n or !!n after any modifiers: read in the instantiation the
         * method's ldtoken gives (when it gets a handle: watch_names.c) */
        const uint8_t *p = t->bytes, *end = t->bytes + t->len;
        while (p < end && (*p == 0x1f || *p == 0x20)) {
            uint32_t skip;
            p++;
            if (md_uncompress(&p, end, &skip) < 0)
                return;
        }
        if (end - p >= 2 && (p[0] == 0x13 || p[0] == 0x1e) && p[1] < 0x80) {
            v->read = WATCH_READ_GENERIC;
            v->generic[0] = p[0];
            v->generic[1] = p[1];
        }
    } else if (k == SIG_VALUETYPE) {
        for (const struct watch_fixed_type *f = watch_fixed_types; f->name; f++)
            if (type_is(a, t->token, "System", f->name)) {
                v->read = WATCH_READ_BYTES;
                v->size = f->size;
                v->show = f->show;
                return;
            }
        uint8_t underlying;
        if (((t->token >> 24) == MD_TYPEDEF &&
             enum_of(a, t->token & 0xffffff, &v->enum_index, &underlying) == 0) ||
            ((t->token >> 24) == MD_TYPEREF &&
             enum_elsewhere(a, t->token & 0xffffff, &v->enum_index, &underlying) == 0)) {
            v->read = WATCH_READ_BYTES;
            v->size = primitive_sizes[underlying];
            v->kind = underlying;
            v->show = WATCH_SHOW_ENUM;
        }
    }
}

/* ---- formatting (pure) ---------------------------------------------------------------- */

/* Days since 0001-01-01 (proleptic Gregorian) to a civil date. */
static void civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d)
{
    /* shift to days since 0000-03-01 (H. Hinnant's algorithm, era of 400 years) */
    int64_t z = days + 306;
    int64_t era = z / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t yy = (int64_t)yoe + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yy + (*m <= 2);
}

void watch_format_datetime(uint64_t data, char *out, size_t size)
{
    static const uint64_t max_ticks = 3155378975999999999ull; /* 9999-12-31T23:59:59.9999999 */
    uint64_t ticks = data & 0x3fffffffffffffffull;
    unsigned kind = (unsigned)(data >> 62);
    if (ticks > max_ticks) {
        snprintf(out, size, "DateTime(ticks %llu?)", (unsigned long long)ticks);
        return;
    }
    uint64_t day_ticks = 864000000000ull;
    int64_t y;
    unsigned mo, d;
    civil_from_days((int64_t)(ticks / day_ticks), &y, &mo, &d);
    uint64_t rest = ticks % day_ticks;
    unsigned h = (unsigned)(rest / 36000000000ull), mi = (unsigned)(rest / 600000000ull % 60),
             s = (unsigned)(rest / 10000000ull % 60), frac = (unsigned)(rest % 10000000ull);
    snprintf(out, size, "%04lld-%02u-%02uT%02u:%02u:%02u.%07u%s", (long long)y, mo, d, h, mi, s, frac,
             kind == 1 ? "Z" : kind >= 2 ? " (local)" : "");
}

void watch_format_timespan(int64_t ticks, char *out, size_t size)
{
    uint64_t t = ticks < 0 ? (uint64_t)0 - (uint64_t)ticks : (uint64_t)ticks;
    uint64_t days = t / 864000000000ull, rest = t % 864000000000ull;
    unsigned h = (unsigned)(rest / 36000000000ull), mi = (unsigned)(rest / 600000000ull % 60),
             s = (unsigned)(rest / 10000000ull % 60), frac = (unsigned)(rest % 10000000ull);
    char d[32] = "", f[16] = "";
    if (days)
        snprintf(d, sizeof d, "%llu.", (unsigned long long)days);
    if (frac)
        snprintf(f, sizeof f, ".%07u", frac);
    snprintf(out, size, "%s%s%02u:%02u:%02u%s", ticks < 0 ? "-" : "", d, h, mi, s, f);
}

void watch_format_guid(const uint8_t b[16], char *out, size_t size)
{
    uint32_t a;
    uint16_t b2, c;
    memcpy(&a, b, 4);
    memcpy(&b2, b + 4, 2);
    memcpy(&c, b + 6, 2);
    snprintf(out, size, "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", a, b2, c, b[8], b[9],
             b[10], b[11], b[12], b[13], b[14], b[15]);
}

void watch_format_enum(const struct watch_enum *e, const char *type, int64_t value, char *out,
                       size_t size)
{
    (void)type;
    for (uint32_t i = 0; i < e->count; i++)
        if (e->values[i] == value) {
            snprintf(out, size, "%s", e->names[i]);
            return;
        }
    if (e->flags && value) {
        /* as .NET does: the constants whose bits are all set, largest
         * first, must cover the value exactly; else the number */
        uint64_t left = (uint64_t)value;
        char text[256] = "";
        const char *parts[WATCH_ENUM_NAMES];
        uint32_t n = 0;
        for (;;) {
            int best = -1;
            for (uint32_t i = 0; i < e->count; i++) {
                uint64_t c = (uint64_t)e->values[i];
                if (c && (left & c) == c && (best < 0 || c > (uint64_t)e->values[best]))
                    best = (int)i;
            }
            if (best < 0)
                break;
            parts[n++] = e->names[best];
            left &= ~(uint64_t)e->values[best];
            if (!left || n == WATCH_ENUM_NAMES)
                break;
        }
        if (!left && n) {
            size_t o = 0;
            for (uint32_t i = n; i-- > 0 && o < sizeof text;)
                o += (size_t)snprintf(text + o, sizeof text - o, "%s%s", o ? "|" : "", parts[i]);
            snprintf(out, size, "%s", text);
            return;
        }
    }
    snprintf(out, size, "%lld", (long long)value);
}

/* ---- structs' sizes (--fields) ----------------------------------------------------------- */

/* The size and alignment of a struct (TypeDef row of a's) from the
 * metadata alone, when the runtime cannot lay it out otherwise: laid out
 * in sequence (C#'s default for structs), no ClassLayout row (Pack,
 * Size), every field of a fixed size -- primitives, the module's enums,
 * Decimal / DateTime / TimeSpan / Guid, or such a struct of the module
 * (nested at most 3 deep).  A struct holding a reference (the runtime may
 * reorder it) or anything else: -1, and the probe copies none of its
 * bytes (it must never read past a value's end). */
static int struct_size(const struct assembly *a, uint32_t row, int depth, uint32_t *size,
                       uint32_t *align)
{
    uint32_t types = md_rows(&a->md, MD_TYPEDEF);
    if (depth > 3 || !row || row > types)
        return -1;
    if ((md_get(&a->md, MD_TYPEDEF, row, MD_TYPEDEF_FLAGS) & 0x18) != 0x08) /* sequential */
        return -1;
    for (uint32_t c = 1; c <= md_rows(&a->md, MD_CLASSLAYOUT); c++)
        if (md_get(&a->md, MD_CLASSLAYOUT, c, 2) == row)
            return -1;
    uint32_t first, end;
    field_rows(a, row, &first, &end);
    uint32_t at = 0, most = 1;
    for (uint32_t f = first; f && f < end; f++) {
        if (md_get(&a->md, MD_FIELD, f, MD_FIELD_FLAGS) & 0x10) /* static */
            continue;
        struct sig_type t;
        if (watch_field_type(a, f, &t) < 0)
            return -1;
        uint32_t fs = 0, fa = 0;
        if (t.kind < sizeof primitive_sizes && primitive_sizes[t.kind] && t.kind != SIG_POINTER) {
            fs = fa = primitive_sizes[t.kind];
        } else if (t.kind == SIG_VALUETYPE) {
            static const struct {
                const char *name;
                uint8_t size, align;
            } fixed[] = {{"Decimal", 16, 8}, {"DateTime", 8, 8}, {"TimeSpan", 8, 8}, {"Guid", 16, 4}};
            for (size_t i = 0; i < sizeof fixed / sizeof fixed[0] && !fs; i++)
                if (type_is(a, t.token, "System", fixed[i].name)) {
                    fs = fixed[i].size;
                    fa = fixed[i].align;
                }
            uint16_t index;
            uint8_t underlying;
            if (!fs && (t.token >> 24) == MD_TYPEDEF) {
                if (enum_of(a, t.token & 0xffffff, &index, &underlying) == 0)
                    fs = fa = primitive_sizes[underlying];
                else if (struct_size(a, t.token & 0xffffff, depth + 1, &fs, &fa) < 0)
                    return -1;
            }
        }
        if (!fs || !fa)
            return -1;
        at = (at + fa - 1) / fa * fa;
        at += fs;
        if (fa > most)
            most = fa;
    }
    *size = (at + most - 1) / most * most;
    if (align)
        *align = most;
    return 0;
}

/* ---- `this` ---------------------------------------------------------------------------- */

/* Is TypeDef row a value type (it extends System.ValueType or System.Enum)? */
static int is_value_type(const struct assembly *a, uint32_t row)
{
    if (!row || row > md_rows(&a->md, MD_TYPEDEF))
        return 0;
    uint32_t extends = md_get(&a->md, MD_TYPEDEF, row, MD_TYPEDEF_EXTENDS);
    return coded_type_is(a, MD_CODED_TYPEDEFORREF, extends, "System", "ValueType") ||
           coded_type_is(a, MD_CODED_TYPEDEFORREF, extends, "System", "Enum");
}

void watch_plan_this(const struct assembly *a, uint32_t type, int fields, struct watch_value *v)
{
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "this");
    char full[256] = "";
    if (type && type <= a->type_count)
        assembly_type_name(a, type, full, sizeof full);
    const char *shortname = strrchr(full, '.');
    shortname = shortname ? shortname + 1 : full;
    const char *nested = strrchr(shortname, '+');
    snprintf(v->type, sizeof v->type, "%s", nested ? nested + 1 : shortname);
    char *tick = strchr(v->type, '`');
    if (tick)
        *tick = '\0';
    if (is_value_type(a, type)) {
        v->kind = SIG_VALUETYPE; /* `this` is a byref to it: shown by its type */
        v->byref = 1;
        v->read = WATCH_READ_NONE;
        uint32_t size;
        if (fields && struct_size(a, type, 0, &size, NULL) == 0 && size) {
            v->read = WATCH_READ_STRUCT;
            v->size = (uint8_t)(size < WATCH_FIELD_BYTES ? size : WATCH_FIELD_BYTES);
            v->type_token = md_token(MD_TYPEDEF, type);
        }
    } else {
        v->kind = SIG_OBJECT;
        v->read = fields ? WATCH_READ_OBJECT : WATCH_READ_REF;
        if (fields)
            v->type_token = md_token(MD_TYPEDEF, type);
    }
}

void watch_plan_fields(const struct assembly *a, const struct sig_type *t, struct watch_value *v)
{
    if (v->read == WATCH_READ_REF) {
        v->read = WATCH_READ_OBJECT;
        struct sig_type inner;
        const struct sig_type *c = t;
        if (v->byref && inner_type(t, 0x10, &inner) == 0)
            c = &inner;
        if ((c->token >> 24) == MD_TYPEDEF)
            v->type_token = c->token; /* its layout learnt before the first call */
        return;
    }
    if (v->read != WATCH_READ_NONE || v->kind != SIG_VALUETYPE)
        return;
    struct sig_type inner;
    if (v->byref) {
        if (inner_type(t, 0x10, &inner) < 0)
            return;
        t = &inner;
    }
    uint32_t size;
    if ((t->token >> 24) != MD_TYPEDEF || struct_size(a, t->token & 0xffffff, 0, &size, NULL) < 0 ||
        !size)
        return;
    v->read = WATCH_READ_STRUCT;
    v->size = (uint8_t)(size < WATCH_FIELD_BYTES ? size : WATCH_FIELD_BYTES);
    v->type_token = t->token;
}

int watch_enum_index(const struct assembly *a, uint32_t row, uint16_t *index, uint8_t *kind)
{
    return enum_of(a, row, index, kind);
}

uint32_t watch_corelib_type(const char *name)
{
    pthread_mutex_lock(&values_lock);
    const struct assembly *b = NULL;
    uint32_t row = 0;
    int rc = find_type(assembly_named("System.Private.CoreLib"), "System", name, 0, &b, &row);
    pthread_mutex_unlock(&values_lock);
    return rc == 0 ? md_token(MD_TYPEDEF, row) : 0;
}
