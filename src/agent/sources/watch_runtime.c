/*
 * watch_runtime: what showing a watched call asks of the runtime, never
 * of the program's code: the runtime type of a reference the probe saw
 * (its MethodTable, which CoreCLR's ClassID is), and the message of an
 * exception thrown out of a watched method (System.Exception._message,
 * at the offset the runtime's class layout gives, read in place in the
 * ExceptionThrown callback); and with --fields, a class's layout (its own
 * instance fields' offsets, from GetClassLayout, their names and types
 * from the module's file) to show the bytes the probe copied as fields,
 * and where its string fields are, for the probe to take their text.
 */
#include <stdio.h>
#include <string.h>

#include "agent/log.h"
#include "agent/names.h"
#include "agent/sources/watch.h"
#include "common/pdb/meta.h"

#define TYPE_CACHE 64

/* Loop only: MethodTable -> short name and element kind. */
static struct {
    uint64_t mt;
    uint8_t elem;
    char name[96];
} cache[TYPE_CACHE];

/* "System.Collections.Generic.Dictionary`2[System.String,System.Int32]"
 * -> "Dictionary<String, Int32>"; "System.Int32[]" -> "Int32[]". */
void watch_short_type(const char *full, char *out, size_t size)
{
    size_t o = 0, token = 0;
    int depth = 0;
    if (!size)
        return;
    for (const char *c = full; *c && o + 3 < size; c++) {
        if (*c == '.') {
            o = token; /* a namespace or enclosing part: dropped */
        } else if (*c == '`') {
            while (c[1] >= '0' && c[1] <= '9')
                c++;
            if (c[1] == '[' && c[2] != ']') {
                c++;
                out[o++] = '<';
                depth++;
                token = o;
            }
        } else if (*c == ']' && depth > 0 && (c == full || c[-1] != '[')) {
            out[o++] = '>';
            depth--;
            token = o;
        } else if (*c == ',' && depth > 0) {
            out[o++] = ',';
            out[o++] = ' ';
            token = o;
        } else {
            out[o++] = *c;
            if (*c == '[' || *c == '+')
                token = o;
        }
    }
    out[o] = '\0';
}

static uint8_t sig_kind_of(CorElementType t)
{
    switch (t) {
    case ELEMENT_TYPE_BOOLEAN: return SIG_BOOL;
    case ELEMENT_TYPE_CHAR: return SIG_CHAR;
    case ELEMENT_TYPE_I1: return SIG_I1;
    case ELEMENT_TYPE_U1: return SIG_U1;
    case ELEMENT_TYPE_I2: return SIG_I2;
    case ELEMENT_TYPE_U2: return SIG_U2;
    case ELEMENT_TYPE_I4: return SIG_I4;
    case ELEMENT_TYPE_U4: return SIG_U4;
    case ELEMENT_TYPE_I8: return SIG_I8;
    case ELEMENT_TYPE_U8: return SIG_U8;
    case ELEMENT_TYPE_R4: return SIG_R4;
    case ELEMENT_TYPE_R8: return SIG_R8;
    case ELEMENT_TYPE_I: return SIG_I;
    case ELEMENT_TYPE_U: return SIG_U;
    default: return SIG_VOID;
    }
}

static uint8_t primitive_class(ICorProfilerInfo15 *info, ClassID klass);
static void resolve_generic(ICorProfilerInfo15 *info, struct watch_decoded *d);

void watch_resolve(ICorProfilerInfo15 *info, struct watch_decoded *d)
{
    if (d->read == WATCH_READ_GENERIC)
        resolve_generic(info, d);
    if (!d->mt || (d->read != WATCH_READ_REF && d->read != WATCH_READ_ARRAY &&
                   d->read != WATCH_READ_OBJECT))
        return;
    uint32_t slot = (uint32_t)((d->mt >> 3) % TYPE_CACHE);
    if (cache[slot].mt != d->mt) {
        char full[256];
        cache[slot].mt = 0;
        cache[slot].elem = SIG_VOID;
        if (names_describe_class(info, (ClassID)d->mt, full, sizeof full) < 0)
            return;
        /* a compiler-made type (an async method's state machine box, a
         * closure): its declared type says more */
        if (strstr(full, "+<") || full[0] == '<')
            full[0] = '\0';
        watch_short_type(full, cache[slot].name, sizeof cache[slot].name);
        CorElementType elem = ELEMENT_TYPE_END;
        ClassID elem_class = 0;
        ULONG rank = 0;
        if (info->lpVtbl->IsArrayClass(info, (ClassID)d->mt, &elem, &elem_class, &rank) == S_OK &&
            rank == 1)
            cache[slot].elem = sig_kind_of(elem);
        cache[slot].mt = d->mt;
    }
    snprintf(d->runtime_type, sizeof d->runtime_type, "%s", cache[slot].name);
    d->runtime_elem = cache[slot].elem;
}

/* System.Exception._message's offset from the object's start: 0 unknown
 * yet, -1 not found. */
static _Atomic int32_t message_offset;

static int32_t find_message_offset(ICorProfilerInfo15 *info, ClassID klass)
{
    for (int depth = 0; klass && depth < 32; depth++) {
        ModuleID module = 0;
        mdTypeDef token = 0;
        ClassID parent = 0;
        ULONG32 nargs = 0;
        char name[128];
        if (info->lpVtbl->GetClassIDInfo2(info, klass, &module, &token, &parent, 0, &nargs,
                                          NULL) < 0)
            break;
        if (names_describe_class(info, klass, name, sizeof name) == 0 &&
            !strcmp(name, "System.Exception")) {
            static const char *const wanted[1] = {"_message"};
            int32_t offset = -1;
            if (names_field_offsets(info, klass, module, wanted, &offset, 1) == 1 && offset > 0)
                return offset;
            break;
        }
        klass = parent;
    }
    log_warn("watch: System.Exception._message was not found: throws are shown by type only");
    return -1;
}

void watch_throw_seen(ICorProfilerInfo15 *info, ObjectID object, ClassID klass)
{
    int32_t offset = atomic_load_explicit(&message_offset, memory_order_acquire);
    if (!offset && klass) {
        offset = find_message_offset(info, klass);
        atomic_store_explicit(&message_offset, offset, memory_order_release);
    }
    if (offset <= 0 || !object) {
        watch_note_thrown(NULL, 0);
        return;
    }
    /* in the callback the object is in place and does not move */
    const char *message;
    memcpy(&message, (const char *)object + offset, sizeof message);
    watch_note_thrown(message, 1);
}

/* ---- --fields ------------------------------------------------------------------------ */

struct watch_layout watch_layouts[WATCH_LAYOUTS];

#define LAYOUT_PROBES 4

const struct watch_layout *watch_layout_find(uint64_t mt)
{
    uint32_t slot = (uint32_t)((mt >> 3) % WATCH_LAYOUTS);
    for (uint32_t i = 0; i < LAYOUT_PROBES; i++) {
        const struct watch_layout *l = &watch_layouts[(slot + i) % WATCH_LAYOUTS];
        uint64_t got = atomic_load_explicit(&l->mt, memory_order_acquire);
        if (got == mt)
            return l;
        if (!got)
            return NULL;
    }
    return NULL;
}

/* Publishes a class's string fields for the probe (once; a full table or
 * a class already there: nothing). */
static void layout_publish(uint64_t mt, const uint16_t *string_at, uint32_t strings)
{
    if (!mt || watch_layout_find(mt))
        return;
    uint32_t slot = (uint32_t)((mt >> 3) % WATCH_LAYOUTS);
    for (uint32_t i = 0; i < LAYOUT_PROBES; i++) {
        struct watch_layout *l = &watch_layouts[(slot + i) % WATCH_LAYOUTS];
        int free_slot = 0;
        if (!atomic_compare_exchange_strong(&l->claimed, &free_slot, 1))
            continue; /* taken (perhaps by this class, from another thread: then the
                       * probe sees it at the other slot) */
        l->strings = (uint8_t)strings;
        for (uint32_t k = 0; k < strings && k < WATCH_FIELD_STRINGS; k++)
            l->string_at[k] = string_at[k];
        atomic_store_explicit(&l->mt, mt, memory_order_release);
        return;
    }
}

/* A field as --fields shows it. */
struct field_plan {
    char name[32];
    uint32_t at;            /* in the bytes the probe copied */
    int string_index;       /* a string field: its place among the probe's strings, else -1 */
    struct watch_value v;   /* how its bytes are shown (read BYTES, STRING, REF, or NONE) */
};

/* The sig kind of a class that is a primitive or string, by its name
 * (a generic argument), SIG_VOID when neither. */
static uint8_t primitive_class(ICorProfilerInfo15 *info, ClassID klass)
{
    static const struct {
        const char *name;
        uint8_t kind;
    } names[] = {
        {"System.Boolean", SIG_BOOL}, {"System.Char", SIG_CHAR},     {"System.SByte", SIG_I1},
        {"System.Byte", SIG_U1},      {"System.Int16", SIG_I2},      {"System.UInt16", SIG_U2},
        {"System.Int32", SIG_I4},     {"System.UInt32", SIG_U4},     {"System.Int64", SIG_I8},
        {"System.UInt64", SIG_U8},    {"System.Single", SIG_R4},     {"System.Double", SIG_R8},
        {"System.IntPtr", SIG_I},     {"System.UIntPtr", SIG_U},     {"System.String", SIG_STRING},
    };
    char full[128];
    if (!klass || names_describe_class(info, klass, full, sizeof full) < 0)
        return SIG_VOID;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(full, names[i].name))
            return names[i].kind;
    return SIG_VOID;
}

/* The fields of class klass (its own instance fields, at most
 * WATCH_FIELDS_SHOWN), named and planned from its module's file, their
 * places from the runtime; value: a struct's (places from its first
 * field), else an object's (from after its MethodTable pointer).
 * Returns how many (*more: it has more), or -1 when the class's module
 * was not read. */
static int read_layout(ICorProfilerInfo15 *info, ClassID klass, int value, struct field_plan *out,
                       uint16_t *string_at, uint32_t *strings, int *more)
{
    ModuleID module = 0;
    mdTypeDef token = 0;
    ClassID parent = 0, targs[8];
    ULONG32 ntargs = 0;
    *strings = 0;
    if (info->lpVtbl->GetClassIDInfo2(info, klass, &module, &token, &parent, 8, &ntargs, targs) < 0)
        return -1;
    const struct assembly *a = watch_assembly_of(module);
    if (!a)
        return -1;
    COR_FIELD_OFFSET fields[64];
    ULONG n = 0, size = 0;
    if (info->lpVtbl->GetClassLayout(info, klass, fields, 64, &n, &size) < 0)
        return -1;
    int count = 0;
    *more = 0;
    for (ULONG i = 0; i < n && i < 64; i++) {
        if (count == WATCH_FIELDS_SHOWN) {
            *more = 1;
            break;
        }
        uint32_t row = fields[i].ridOfField & 0xffffff;
        if ((fields[i].ridOfField >> 24) != MD_FIELD || !row || row > md_rows(&a->md, MD_FIELD))
            continue;
        struct sig_type t;
        if (watch_field_type(a, row, &t) < 0)
            continue;
        struct field_plan *f = &out[count];
        memset(f, 0, sizeof *f);
        /* an auto-property's field, "<Name>k__BackingField": by the property's name */
        const char *name = md_string(&a->md, md_get(&a->md, MD_FIELD, row, MD_FIELD_NAME));
        const char *backing = strstr(name, ">k__BackingField");
        if (name[0] == '<' && backing)
            snprintf(f->name, sizeof f->name, "%.*s", (int)(backing - name - 1), name + 1);
        else
            snprintf(f->name, sizeof f->name, "%s", name);
        uint32_t offset = (uint32_t)fields[i].ulOffset;
        if (!value && offset < 8)
            continue;
        f->at = value ? offset : offset - 8;
        f->string_index = -1;
        watch_type_text(a, &t, f->v.type, sizeof f->v.type);
        watch_plan_value(a, &t, 0, &f->v);
        /* a field of the class's type parameter (!n): its argument's kind */
        if (t.kind == SIG_GENERIC && t.len >= 2 && t.bytes[0] == 0x13 && t.bytes[1] < ntargs) {
            uint8_t k = primitive_class(info, targs[t.bytes[1]]);
            if (k == SIG_STRING) {
                f->v.read = WATCH_READ_STRING;
                snprintf(f->v.type, sizeof f->v.type, "string");
            } else if (k != SIG_VOID) {
                struct sig_type pt = {.kind = k};
                watch_plan_value(a, &pt, 0, &f->v);
                snprintf(f->v.type, sizeof f->v.type, "%s", watch_keyword(k));
            } else {
                f->v.read = WATCH_READ_REF; /* a reference, or a struct: by the argument's name */
                char full[128];
                if (names_describe_class(info, targs[t.bytes[1]], full, sizeof full) == 0)
                    watch_short_type(full, f->v.type, sizeof f->v.type);
            }
        }
        if (f->v.read == WATCH_READ_STRING && !value && *strings < WATCH_FIELD_STRINGS) {
            f->string_index = (int)*strings;
            string_at[(*strings)++] = (uint16_t)offset;
        }
        count++;
    }
    return count;
}

#define LAYOUT_CACHE 64

/* Loop only: the layouts of the classes shown so far. */
static struct {
    ClassID klass;
    int value;
    int count, more;
    struct field_plan fields[WATCH_FIELDS_SHOWN];
} layouts[LAYOUT_CACHE];

void watch_layout_learn(ICorProfilerInfo15 *info, ModuleID module, mdTypeDef type)
{
    ClassID klass = 0;
    if (info->lpVtbl->GetClassFromToken(info, module, type, &klass) < 0 || !klass)
        return;
    struct field_plan fields[WATCH_FIELDS_SHOWN];
    uint16_t string_at[WATCH_FIELD_STRINGS];
    uint32_t strings = 0;
    int more;
    if (read_layout(info, klass, 0, fields, string_at, &strings, &more) >= 0)
        layout_publish((uint64_t)klass, string_at, strings);
}

/* One field's value from the copied bytes. */
static void format_field(const struct field_plan *f, const struct watch_decoded *d, char *out,
                         size_t size)
{
    const struct watch_value *v = &f->v;
    struct watch_decoded one;
    memset(&one, 0, sizeof one);
    if (v->read == WATCH_READ_BYTES) {
        if (v->byref || f->at + v->size > d->nbytes) {
            snprintf(out, size, "%s", v->type);
            return;
        }
        one.read = WATCH_READ_BYTES;
        memcpy(one.bytes, d->bytes + f->at, v->size);
        one.nbytes = v->size;
        watch_format_value(v, &one, out, size);
        return;
    }
    uint64_t ref = 0;
    int have_ref = v->read != WATCH_READ_NONE && f->at + 8 <= d->nbytes;
    if (have_ref)
        memcpy(&ref, d->bytes + f->at, 8);
    if (have_ref && !ref) {
        snprintf(out, size, "null");
        return;
    }
    if (v->read == WATCH_READ_STRING && f->string_index >= 0 && d->layout_known &&
        (uint32_t)f->string_index < d->strings) {
        one.read = WATCH_READ_STRING;
        uint32_t k = (uint32_t)f->string_index;
        one.is_null = d->string_len[k] == UINT32_MAX;
        one.length = d->string_len[k];
        one.chars = d->string_chars[k];
        memcpy(one.text, d->string_text[k], one.chars * sizeof one.text[0]);
        watch_format_string(&one, out, size);
        return;
    }
    snprintf(out, size, "%s", v->type); /* not read: by its type */
}

void watch_format_fields(ICorProfilerInfo15 *info, const struct watch_value *v,
                         const struct watch_decoded *d, ModuleID module, char *out, size_t size)
{
    out[0] = '\0';
    ClassID klass = 0;
    int value = d->read == WATCH_READ_STRUCT;
    if (d->read == WATCH_READ_OBJECT && !d->is_null)
        klass = (ClassID)d->mt;
    else if (value && v->type_token &&
             info->lpVtbl->GetClassFromToken(info, module, v->type_token, &klass) < 0)
        klass = 0;
    if (!klass)
        return;
    uint32_t slot = (uint32_t)((klass >> 3) % LAYOUT_CACHE);
    if (layouts[slot].klass != klass || layouts[slot].value != value) {
        uint16_t string_at[WATCH_FIELD_STRINGS];
        uint32_t strings = 0;
        layouts[slot].klass = 0;
        int count = read_layout(info, klass, value, layouts[slot].fields, string_at, &strings,
                                &layouts[slot].more);
        if (count < 0)
            return;
        layouts[slot].klass = klass;
        layouts[slot].value = value;
        layouts[slot].count = count;
        if (!value)
            layout_publish((uint64_t)klass, string_at, strings); /* the next calls take them */
    }
    size_t o = 0;
    for (int i = 0; i < layouts[slot].count && o + 1 < size; i++) {
        char text[120];
        format_field(&layouts[slot].fields[i], d, text, sizeof text);
        o += (size_t)snprintf(out + o, size - o, "%s%s=%s", i ? "\x1e" : "",
                              layouts[slot].fields[i].name, text);
    }
    if (layouts[slot].more && o < size)
        o += (size_t)snprintf(out + o, size - o, "\x1e...");
    if (o >= size)
        out[0] = '\0'; /* cut: none rather than a field cut in half */
}

/* ---- values of T ---------------------------------------------------------------------- */

static const uint8_t kind_sizes[] = {
    [SIG_BOOL] = 1, [SIG_I1] = 1, [SIG_U1] = 1, [SIG_CHAR] = 2, [SIG_I2] = 2, [SIG_U2] = 2,
    [SIG_I4] = 4, [SIG_U4] = 4, [SIG_R4] = 4, [SIG_I8] = 8, [SIG_U8] = 8, [SIG_R8] = 8,
    [SIG_I] = 8, [SIG_U] = 8,
};

/* A value of T as a value of its instantiation's type (d->plan): a
 * primitive, an enum (of a module watch read), Decimal / DateTime /
 * TimeSpan / Guid, a string, another reference (by its runtime type), or
 * another struct by its type's name. */
static void resolve_generic(ICorProfilerInfo15 *info, struct watch_decoded *d)
{
    if (d->generic_kind == WATCH_GENERIC_UNKNOWN || !d->handle)
        return;
    struct watch_value *p = &d->plan;
    memset(p, 0, sizeof *p);
    char full[256] = "";
    names_describe_class(info, (ClassID)d->handle, full, sizeof full);
    watch_short_type(full, p->type, sizeof p->type);
    d->has_plan = 1;
    if (d->generic_kind == WATCH_GENERIC_STRING) {
        d->read = WATCH_READ_STRING;
        p->read = WATCH_READ_STRING;
        p->kind = SIG_STRING;
        snprintf(p->type, sizeof p->type, "string");
        return;
    }
    if (d->generic_kind == WATCH_GENERIC_REF) {
        d->read = WATCH_READ_REF;
        p->read = WATCH_READ_REF;
        p->kind = SIG_OBJECT;
        watch_resolve(info, d); /* the object's runtime type */
        return;
    }
    uint8_t k = primitive_class(info, (ClassID)d->handle);
    if (k != SIG_VOID && k != SIG_STRING && k < sizeof kind_sizes && kind_sizes[k]) {
        p->read = WATCH_READ_BYTES;
        p->kind = k;
        p->size = kind_sizes[k];
        snprintf(p->type, sizeof p->type, "%s", watch_keyword(k));
    } else {
        /* (a ref struct such as Span is never a type argument) */
        for (const struct watch_fixed_type *f = watch_fixed_types;
             f->name && !p->read && !strncmp(full, "System.", 7); f++)
            if (!strcmp(full + 7, f->name)) {
                p->read = WATCH_READ_BYTES;
                p->kind = SIG_VALUETYPE;
                p->size = f->size;
                p->show = f->show;
            }
        ModuleID module = 0;
        mdTypeDef token = 0;
        ClassID parent = 0;
        ULONG32 nargs = 0;
        const struct assembly *a;
        uint8_t underlying;
        if (!p->read &&
            info->lpVtbl->GetClassIDInfo2(info, (ClassID)d->handle, &module, &token, &parent, 0,
                                          &nargs, NULL) >= 0 &&
            (a = watch_assembly_of(module)) != NULL &&
            watch_enum_index(a, token & 0xffffff, &p->enum_index, &underlying) == 0) {
            p->read = WATCH_READ_BYTES;
            p->kind = underlying;
            p->size = kind_sizes[underlying];
            p->show = WATCH_SHOW_ENUM;
        }
    }
    if (!p->read || p->size > d->nbytes) {
        d->read = WATCH_READ_NONE; /* a struct: by its type's name */
        p->read = WATCH_READ_NONE;
        p->kind = SIG_VALUETYPE;
        return;
    }
    d->read = WATCH_READ_BYTES;
    d->nbytes = p->size;
}

int watch_generic_learn(ICorProfilerInfo15 *info, ModuleID corelib)
{
    if (atomic_load(&watch_type_handle_offset))
        return 0;
    uint32_t rt_token = watch_corelib_type("RuntimeType"), str_token = watch_corelib_type("String");
    ClassID rt = 0, str = 0;
    if (!corelib || !rt_token || !str_token ||
        info->lpVtbl->GetClassFromToken(info, corelib, rt_token, &rt) < 0 || !rt ||
        info->lpVtbl->GetClassFromToken(info, corelib, str_token, &str) < 0 || !str)
        return -1;
    static const char *const wanted[1] = {"m_handle"};
    int32_t offset = -1;
    if (names_field_offsets(info, rt, corelib, wanted, &offset, 1) != 1 || offset < 8 || offset > 256)
        return -1;
    atomic_store(&watch_string_mt, (uint64_t)str);
    atomic_store(&watch_type_handle_offset, (uint32_t)offset);
    return 0;
}
