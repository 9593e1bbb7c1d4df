/*
 * watch_names: what live probes know of a method from its assembly's
 * file, without the runtime: "Namespace.Type.Method" for matching a
 * pattern, the short "Type.Method" and each parameter's name and type for
 * the lines, and how the probe reads each value (watch.h); and the names
 * nearest a pattern that matched nothing.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "agent/sources/watch.h"
#include "common/config.h"
#include "common/pdb/meta.h"

/* strncpy that always terminates (and says nothing of truncation) */
void watch_copy(char *out, size_t size, const char *in)
{
    size_t n = strlen(in);
    if (n >= size)
        n = size - 1;
    memcpy(out, in, n);
    out[n] = '\0';
}

const char *watch_last_dot(const char *s)
{
    const char *d = strrchr(s, '.');
    return d ? d + 1 : s;
}

/* A TypeDef/TypeRef/TypeSpec token's short name. */
static void token_name(const struct assembly *a, uint32_t token, char *out, size_t size)
{
    uint32_t row = token & 0xffffff;
    out[0] = '\0';
    if ((token >> 24) == MD_TYPEDEF && row && row <= a->type_count) {
        char full[256];
        assembly_type_name(a, row, full, sizeof full);
        watch_copy(out, size, watch_last_dot(full));
    } else if ((token >> 24) == MD_TYPEREF) {
        snprintf(out, size, "%s", md_string(&a->md, md_get(&a->md, MD_TYPEREF, row, MD_TYPEREF_NAME)));
    }
    char *tick = strchr(out, '`');
    if (tick)
        *tick = '\0';
    if (!out[0])
        snprintf(out, size, "?");
}

static const char *const keywords[] = {
    [SIG_VOID] = "void", [SIG_BOOL] = "bool", [SIG_CHAR] = "char", [SIG_I1] = "sbyte",
    [SIG_U1] = "byte", [SIG_I2] = "short", [SIG_U2] = "ushort", [SIG_I4] = "int",
    [SIG_U4] = "uint", [SIG_I8] = "long", [SIG_U8] = "ulong", [SIG_R4] = "float",
    [SIG_R8] = "double", [SIG_I] = "nint", [SIG_U] = "nuint", [SIG_STRING] = "string",
};

void watch_type_text(const struct assembly *a, const struct sig_type *t, char *out, size_t size)
{
    const uint8_t *p = t->bytes, *end = t->bytes + t->len;
    while (p < end && (*p == 0x1f || *p == 0x20 || *p == 0x45)) { /* modifiers, pinned */
        uint8_t b = *p++;
        uint32_t skip;
        if (b != 0x45 && md_uncompress(&p, end, &skip) < 0)
            break;
    }
    struct sig_type inner;
    const uint8_t *q = p + 1;
    char sub[48];
    if (t->kind < sizeof keywords / sizeof keywords[0] && keywords[t->kind]) {
        snprintf(out, size, "%s", keywords[t->kind]);
    } else if (t->kind == SIG_OBJECT && t->array && p < end && *p == 0x1d &&
               sig_type(&q, end, &inner) == 0) {
        watch_type_text(a, &inner, sub, sizeof sub);
        snprintf(out, size, "%.40s[]", sub);
    } else if (t->kind == SIG_OBJECT && t->array) {
        snprintf(out, size, "Array");
    } else if (t->kind == SIG_OBJECT && !t->token) {
        snprintf(out, size, "object");
    } else if (t->kind == SIG_OBJECT || t->kind == SIG_VALUETYPE) {
        token_name(a, t->token, out, size);
    } else if (t->kind == SIG_BYREF && p < end && sig_type(&q, end, &inner) == 0) {
        watch_type_text(a, &inner, sub, sizeof sub);
        snprintf(out, size, "ref %.40s", sub);
    } else if (t->kind == SIG_GENERIC) {
        snprintf(out, size, "T");
    } else if (t->kind == SIG_POINTER) {
        snprintf(out, size, "pointer");
    } else {
        snprintf(out, size, "?");
    }
}

static void describe(const struct assembly *a, const struct sig_type *t, int fields,
                     struct watch_value *v)
{
    watch_type_text(a, t, v->type, sizeof v->type);
    watch_plan_value(a, t, 0, v);
    if (fields)
        watch_plan_fields(a, t, v);
}

/* "Namespace.Type.Method" of a MethodDef row. */
void watch_full_name(const struct assembly *a, uint32_t row, char *out, size_t size)
{
    char type[512];
    assembly_type_name(a, a->methods[row - 1].type, type, sizeof type);
    snprintf(out, size, "%s.%s", type, assembly_method_name(a, row));
}

int watch_pattern_matches(const char *pattern, const char *name)
{
    if (!fnmatch(pattern, name, 0))
        return 1;
    char suffix[CONFIG_WATCH_MAX + 4];
    snprintf(suffix, sizeof suffix, "*.%s", pattern);
    if (!fnmatch(suffix, name, 0))
        return 1;
    /* a generic type by its name as C# writes it: Holder.Swap for Holder`1.Swap */
    if (!strchr(name, '`') || strchr(pattern, '`'))
        return 0;
    char plain[768];
    size_t o = 0;
    for (const char *c = name; *c && o + 1 < sizeof plain; c++) {
        if (*c == '`') {
            while (c[1] >= '0' && c[1] <= '9')
                c++;
            continue;
        }
        plain[o++] = *c;
    }
    plain[o] = '\0';
    return !fnmatch(pattern, plain, 0) || !fnmatch(suffix, plain, 0);
}


int watch_has_body(const struct assembly *a, uint32_t row)
{
    return md_get(&a->md, MD_METHODDEF, row, MD_METHODDEF_RVA) != 0;
}

/* Fills watch_methods[index] for a MethodDef row.  Returns 0, or -1 with why. */
int watch_describe_method(const struct assembly *a, uint32_t row, struct watch_method *m,
                          int fields, char *why, size_t why_size)
{
    const uint8_t *blob;
    uint32_t len;
    struct sig_method sig;
    if (md_blob(&a->md, md_get(&a->md, MD_METHODDEF, row, MD_METHODDEF_SIGNATURE), &blob, &len) < 0 ||
        sig_method(blob, len, &sig) < 0)
        return snprintf(why, why_size, "its signature could not be read"), -1;
    if (sig.vararg)
        return snprintf(why, why_size, "a varargs method"), -1;
    if (sig.ret.kind == SIG_OTHER)
        return snprintf(why, why_size, "its return type cannot be kept in a local"), -1;
    char type[512];
    assembly_type_name(a, a->methods[row - 1].type, type, sizeof type);
    char *tick = strchr(type, '`'); /* a generic type by its name: Holder.Swap */
    if (tick)
        memmove(tick, tick + strspn(tick + 1, "0123456789") + 1,
                strlen(tick + strspn(tick + 1, "0123456789") + 1) + 1);
    snprintf(m->display, sizeof m->display, "%.80s.%.70s", watch_last_dot(type), assembly_method_name(a, row));
    m->params = sig.param_count;
    m->has_this = sig.has_this;
    uint32_t room = WATCH_ARGS - (m->has_this ? 1 : 0);
    m->taken = sig.param_count < room ? sig.param_count : room;
    if (m->has_this)
        watch_plan_this(a, a->methods[row - 1].type, fields, &m->self);
    for (uint32_t i = 0; i < m->taken; i++) {
        describe(a, &sig.params[i], fields, &m->args[i]);
        snprintf(m->args[i].name, sizeof m->args[i].name, "arg%u", i + 1);
    }
    describe(a, &sig.ret, fields, &m->ret);
    /* values of a type parameter: one handle per parameter (ldtoken'd at
     * entry), its address in a probe slot after the values' (the
     * result's: watch_exit's last argument); none left: shown as T */
    m->handles = 0;
    for (uint32_t i = 0; i <= m->taken; i++) {
        struct watch_value *v = i < m->taken ? &m->args[i] : &m->ret;
        if (v->read != WATCH_READ_GENERIC)
            continue;
        uint32_t k = 0;
        while (k < m->handles && memcmp(m->handle_sig[k], v->generic, 2))
            k++;
        uint32_t first_slot = m->taken + (m->has_this ? 1 : 0);
        if (k == m->handles) {
            if (k == WATCH_HANDLES || (i < m->taken && first_slot + k >= WATCH_ARGS)) {
                v->read = WATCH_READ_NONE;
                continue;
            }
            memcpy(m->handle_sig[k], v->generic, 2);
            m->handles++;
        }
        if (i < m->taken && first_slot + k >= WATCH_ARGS) {
            v->read = WATCH_READ_NONE;
            continue;
        }
        v->handle = (uint8_t)(k + 1);
    }
    /* parameter names: Param rows [ParamList, next method's ParamList) */
    uint32_t first = md_get(&a->md, MD_METHODDEF, row, MD_METHODDEF_PARAMLIST);
    uint32_t end = row < md_rows(&a->md, MD_METHODDEF)
                       ? md_get(&a->md, MD_METHODDEF, row + 1, MD_METHODDEF_PARAMLIST)
                       : md_rows(&a->md, MD_PARAM) + 1;
    for (uint32_t p = first; p && p < end && p <= md_rows(&a->md, MD_PARAM); p++) {
        uint32_t seq = md_get(&a->md, MD_PARAM, p, 1);
        if (seq < 1 || seq > m->taken)
            continue;
        struct watch_value *v = &m->args[seq - 1];
        snprintf(v->name, sizeof v->name, "%s", md_string(&a->md, md_get(&a->md, MD_PARAM, p, 2)));
        uint32_t flags = md_get(&a->md, MD_PARAM, p, 0);
        if (v->byref && (flags & 0x2) && !(flags & 0x1)) /* [Out], not [In]: not set yet */
            v->read = WATCH_READ_OUT;
    }
    return 0;
}

static unsigned distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 200 || m > 200)
        return 1000;
    unsigned row[201];
    for (size_t j = 0; j <= m; j++)
        row[j] = (unsigned)j;
    for (size_t i = 1; i <= n; i++) {
        unsigned prev = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= m; j++) {
            unsigned cur = row[j];
            unsigned cost = a[i - 1] == b[j - 1] ? 0 : 1;
            unsigned best = prev + cost;
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            prev = cur;
        }
    }
    return row[m];
}

/* The NEAR nearest method names of the assemblies to a pattern (as many
 * trailing parts compared as the pattern has), comma-separated into out;
 * "" when none. */
void watch_near_names(const char *pattern, const struct assembly *const *assemblies, uint32_t count,
                      char *out, size_t size)
{
    enum { NEAR = 5 };
    struct {
        unsigned d;
        char name[200];
    } best[NEAR];
    int found = 0;
    char name[768];
    int dots = 0;
    for (const char *c = pattern; *c; c++)
        dots += *c == '.';
    for (uint32_t mi = 0; mi < count; mi++) {
        const struct assembly *a = assemblies[mi];
        for (uint32_t row = 1; row <= a->method_count; row++) {
            watch_full_name(a, row, name, sizeof name);
            if (strchr(name, '<') || !watch_has_body(a, row))
                continue;
            const char *tail = name;
            int left = dots;
            for (const char *c = name + strlen(name); c > name; c--)
                if (c[-1] == '.' && left-- == 0) {
                    tail = c;
                    break;
                }
            unsigned d = distance(pattern, tail);
            int dup = 0;
            for (int k = 0; k < found; k++)
                dup |= !strcmp(best[k].name, name);
            if (dup)
                continue;
            int at = found;
            while (at > 0 && best[at - 1].d > d)
                at--;
            if (at >= NEAR)
                continue;
            if (found < NEAR)
                found++;
            memmove(&best[at + 1], &best[at], (size_t)(found - 1 - at) * sizeof best[0]);
            best[at].d = d;
            watch_copy(best[at].name, sizeof best[at].name, name);
        }
    }
    size_t o = 0;
    out[0] = '\0';
    for (int k = 0; k < found && o + 1 < size; k++)
        o += (size_t)snprintf(out + o, size - o, "%s%s", k ? ", " : "", best[k].name);
}

/* ---- overloads by signature: 'Pricing.Quote(string,int)' ---------------------------- */

/* The C# keyword of a System type's name ("System.Int32", "Int32" -> "int"),
 * or the name itself. */
static const char *keyword_of(const char *name)
{
    static const char *const system[][2] = {
        {"Boolean", "bool"},  {"Char", "char"},     {"SByte", "sbyte"},   {"Byte", "byte"},
        {"Int16", "short"},   {"UInt16", "ushort"}, {"Int32", "int"},     {"UInt32", "uint"},
        {"Int64", "long"},    {"UInt64", "ulong"},  {"Single", "float"},  {"Double", "double"},
        {"IntPtr", "nint"},   {"UIntPtr", "nuint"}, {"String", "string"}, {"Object", "object"},
        {"Void", "void"},     {"Decimal", "decimal"},
    };
    const char *bare = !strncmp(name, "System.", 7) ? name + 7 : name;
    for (size_t i = 0; i < sizeof system / sizeof system[0]; i++)
        if (!strcmp(bare, system[i][0]))
            return system[i][1];
    return name;
}

/* Does one written type ("int", "System.Int32", "WatchApp.Order",
 * "string[]", "ref int") name the type shown as `shown`? */
static int type_matches(const char *written, const char *shown)
{
    char w[128];
    watch_copy(w, sizeof w, written);
    /* a generic instantiation is shown by its type's name alone
     * ("ReadOnlySpan"): its arguments are not compared */
    char *lt = strchr(w, '<'), *gt = lt ? strrchr(lt, '>') : NULL;
    if (lt && gt)
        memmove(lt, gt + 1, strlen(gt + 1) + 1);
    if (!strncmp(w, "ref ", 4) || !strncmp(w, "out ", 4) || !strncmp(w, "in ", 3)) {
        if (strncmp(shown, "ref ", 4))
            return 0;
        return type_matches(w + (w[0] == 'i' ? 3 : 4), shown + 4);
    }
    size_t n = strlen(w), m = strlen(shown);
    if (n > 2 && !strcmp(w + n - 2, "[]")) {
        if (m <= 2 || strcmp(shown + m - 2, "[]"))
            return 0;
        char inner_w[128], inner_s[64];
        snprintf(inner_w, sizeof inner_w, "%.*s", (int)(n - 2), w);
        snprintf(inner_s, sizeof inner_s, "%.*s", (int)(m - 2), shown);
        return type_matches(inner_w, inner_s);
    }
    const char *k = keyword_of(w);
    if (!strcmp(k, keyword_of(shown)))
        return 1;
    /* a full name against the short one shown: its last part */
    return strchr(k, '.') && !strcmp(watch_last_dot(k), shown);
}

int watch_signature_matches(const struct assembly *a, uint32_t row, const char *params)
{
    const uint8_t *blob;
    uint32_t len;
    struct sig_method sig;
    if (md_blob(&a->md, md_get(&a->md, MD_METHODDEF, row, MD_METHODDEF_SIGNATURE), &blob, &len) < 0 ||
        sig_method(blob, len, &sig) < 0 || sig.param_count > SIG_MAX_PARAMS)
        return 0;
    uint32_t i = 0;
    const char *p = params;
    while (*p) {
        size_t n = strcspn(p, ",");
        char written[128];
        if (n >= sizeof written || i >= sig.param_count)
            return 0;
        memcpy(written, p, n);
        written[n] = '\0';
        char shown[64];
        watch_type_text(a, &sig.params[i], shown, sizeof shown);
        if (!type_matches(written, shown))
            return 0;
        i++;
        p += n + (p[n] == ',');
    }
    return i == sig.param_count;
}

void watch_signature_text(const struct assembly *a, uint32_t row, char *out, size_t size)
{
    const uint8_t *blob;
    uint32_t len;
    struct sig_method sig;
    size_t o = (size_t)snprintf(out, size, "%s(", assembly_method_name(a, row));
    if (md_blob(&a->md, md_get(&a->md, MD_METHODDEF, row, MD_METHODDEF_SIGNATURE), &blob, &len) == 0 &&
        sig_method(blob, len, &sig) == 0) {
        for (uint32_t i = 0; i < sig.param_count && i < SIG_MAX_PARAMS && o < size; i++) {
            char shown[64];
            watch_type_text(a, &sig.params[i], shown, sizeof shown);
            o += (size_t)snprintf(out + o, size - o, "%s%s", i ? "," : "", keyword_of(shown));
        }
    }
    if (o < size)
        snprintf(out + o, size - o, ")");
}
