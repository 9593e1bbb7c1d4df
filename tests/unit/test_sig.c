/*
 * test_sig: common/pdb/sig (method and local signatures, for live probes)
 * on hand-built blobs, valid and damaged; and how the probes' values are
 * shown (agent/sources/watch_probe.c: decimals, strings, primitives).
 */
#include <stdlib.h>
#include <string.h>

#include "agent/sources/watch.h"
#include "common/pdb/sig.h"
#include "test.h"

static void test_sig_static_method(void)
{
    /* static decimal Quote(string sku, int qty): Decimal is TypeRef row 5 */
    static const uint8_t blob[] = {0x00, 0x02, 0x11, 0x15, 0x0e, 0x08};
    struct sig_method m;
    REQUIRE(sig_method(blob, sizeof blob, &m) == 0);
    CHECK(!m.has_this);
    CHECK_EQ(m.param_count, 2);
    CHECK_EQ(m.ret.kind, SIG_VALUETYPE);
    CHECK_EQ(m.ret.token, 0x01000005);
    CHECK_EQ(m.ret.len, 2);
    CHECK_EQ(m.params[0].kind, SIG_STRING);
    CHECK_EQ(m.params[1].kind, SIG_I4);
}

static void test_sig_instance_generic(void)
{
    /* instance void M<T>(int[], ref long, List<T> (TypeDef 2), T, fnptr void()) */
    static const uint8_t blob[] = {0x30, 0x01, 0x05, 0x01, 0x1d, 0x08, 0x10, 0x0a, 0x15, 0x12,
                                   0x08, 0x01, 0x1e, 0x00, 0x1e, 0x00, 0x1b, 0x00, 0x00, 0x01};
    struct sig_method m;
    REQUIRE(sig_method(blob, sizeof blob, &m) == 0);
    CHECK(m.has_this);
    CHECK_EQ(m.generic_count, 1);
    CHECK_EQ(m.param_count, 5);
    CHECK_EQ(m.ret.kind, SIG_VOID);
    CHECK_EQ(m.params[0].kind, SIG_OBJECT);
    CHECK(m.params[0].array);
    CHECK_EQ(m.params[0].len, 2);
    CHECK_EQ(m.params[1].kind, SIG_BYREF);
    CHECK_EQ(m.params[2].kind, SIG_OBJECT);
    CHECK_EQ(m.params[2].token, 0x02000002);
    CHECK_EQ(m.params[2].len, 6);
    CHECK_EQ(m.params[3].kind, SIG_GENERIC);
    CHECK_EQ(m.params[4].kind, SIG_POINTER);
}

static void test_sig_modifiers(void)
{
    /* int f(modopt(TypeRef 5) int, int[,] with sizes and bounds) */
    static const uint8_t blob[] = {0x00, 0x02, 0x08, 0x20, 0x15, 0x08,
                                   0x14, 0x08, 0x02, 0x01, 0x03, 0x01, 0x00};
    struct sig_method m;
    REQUIRE(sig_method(blob, sizeof blob, &m) == 0);
    CHECK_EQ(m.params[0].kind, SIG_I4);
    CHECK_EQ(m.params[0].len, 3); /* the modifier belongs to the type */
    CHECK_EQ(m.params[1].kind, SIG_OBJECT);
    CHECK(m.params[1].array);
}

static void test_sig_damaged(void)
{
    static const uint8_t truncated[] = {0x00, 0x02, 0x11, 0x15, 0x0e};
    static const uint8_t bad_type[] = {0x00, 0x01, 0x01, 0xff};
    static const uint8_t void_param[] = {0x00, 0x01, 0x01, 0x01};
    static const uint8_t bad_cc[] = {0x07, 0x00, 0x01};
    static const uint8_t bad_coded[] = {0x00, 0x00, 0x12, 0x03};
    struct sig_method m;
    CHECK(sig_method(truncated, sizeof truncated, &m) < 0);
    CHECK(sig_method(bad_type, sizeof bad_type, &m) < 0);
    CHECK(sig_method(void_param, sizeof void_param, &m) < 0);
    CHECK(sig_method(bad_cc, sizeof bad_cc, &m) < 0);
    CHECK(sig_method(bad_coded, sizeof bad_coded, &m) < 0);
    CHECK(sig_method(NULL, 0, &m) < 0);
    /* nesting without end: refused, not a stack overflow */
    size_t n = 100000;
    uint8_t *deep = malloc(n);
    REQUIRE(deep);
    deep[0] = 0x00;
    deep[1] = 0x00;
    memset(deep + 2, 0x0f, n - 2);
    CHECK(sig_method(deep, n, &m) < 0);
    free(deep);
}

static void test_sig_locals_append(void)
{
    static const uint8_t old[] = {0x07, 0x02, 0x08, 0x0e};
    static const uint8_t i8[] = {0x0a}, dec[] = {0x11, 0x15};
    struct sig_type add[2] = {{.kind = SIG_I8, .bytes = i8, .len = 1},
                              {.kind = SIG_VALUETYPE, .bytes = dec, .len = 2}};
    uint8_t out[64];
    size_t len = 0;
    CHECK_EQ(sig_locals_append(old, sizeof old, add, 2, out, sizeof out, &len), 2);
    static const uint8_t want[] = {0x07, 0x04, 0x08, 0x0e, 0x0a, 0x11, 0x15};
    CHECK_EQ(len, sizeof want);
    CHECK(!memcmp(out, want, sizeof want));
    /* no locals before */
    CHECK_EQ(sig_locals_append(NULL, 0, add, 1, out, sizeof out, &len), 0);
    CHECK_EQ(len, 3);
    CHECK(out[0] == 0x07 && out[1] == 0x01 && out[2] == 0x0a);
    /* not a local signature, or no room */
    static const uint8_t field[] = {0x06, 0x08};
    CHECK(sig_locals_append(field, sizeof field, add, 1, out, sizeof out, &len) < 0);
    CHECK(sig_locals_append(old, sizeof old, add, 2, out, 5, &len) < 0);
    /* 127 locals + 1: the count grows to two bytes */
    uint8_t many[2 + 127];
    many[0] = 0x07;
    many[1] = 127;
    memset(many + 2, 0x08, 127);
    CHECK_EQ(sig_locals_append(many, sizeof many, add, 1, out, sizeof out, &len), -1);
    uint8_t big[256];
    CHECK_EQ(sig_locals_append(many, sizeof many, add, 1, big, sizeof big, &len), 127);
    CHECK(big[1] == 0x80 && big[2] == 0x80 && len == 3 + 127 + 1);
}

static void test_sig_compress(void)
{
    uint8_t b[4];
    CHECK_EQ(sig_compress(0x7f, b), 1);
    CHECK_EQ(b[0], 0x7f);
    CHECK_EQ(sig_compress(0x80, b), 2);
    CHECK(b[0] == 0x80 && b[1] == 0x80);
    CHECK_EQ(sig_compress(0x3fff, b), 2);
    CHECK(b[0] == 0xbf && b[1] == 0xff);
    CHECK_EQ(sig_compress(0x4000, b), 4);
    CHECK(b[0] == 0xc0 && b[1] == 0x00 && b[2] == 0x40 && b[3] == 0x00);
    CHECK_EQ(sig_compress(0x20000000, b), 0);
}

/* One value through the probe's encoding and the loop's decoding. */
static void shown(const struct watch_value *v, const uint64_t *words, uint32_t n, const char *want)
{
    uint32_t pos = 0;
    struct watch_decoded d;
    char text[200];
    CHECK(watch_decode_value(words, n, &pos, &d) == 0);
    CHECK_EQ(pos, n);
    watch_format_value(v, &d, text, sizeof text);
    CHECK_STR(text, want);
}

static void test_watch_values(void)
{
    struct watch_value dec = {.read = WATCH_READ_BYTES, .size = 16, .kind = SIG_VALUETYPE,
                              .show = WATCH_SHOW_DECIMAL, .type = "Decimal"};
    /* 9.00: 900 scale 2; -0.05: 5 scale 2 negative */
    uint64_t w1[] = {WATCH_READ_BYTES | 16u << 16, (uint64_t)2 << 16, 900};
    shown(&dec, w1, 3, "9.00");
    uint64_t w2[] = {WATCH_READ_BYTES | 16u << 16, (uint64_t)(0x80000000u | 2u << 16), 5};
    shown(&dec, w2, 3, "-0.05");
    struct watch_value str = {.read = WATCH_READ_STRING, .kind = SIG_STRING, .type = "string"};
    /* "ab\"" of length 50 (3 characters taken) */
    uint64_t w3[] = {WATCH_READ_STRING | 3u << 24 | (uint64_t)50 << 32,
                     'a' | (uint64_t)'b' << 16 | (uint64_t)'"' << 32};
    shown(&str, w3, 2, "\"ab\\\"\"...(50 chars)");
    uint64_t w4[] = {WATCH_READ_STRING | 1u << 8};
    shown(&str, w4, 1, "null");
    struct watch_value i4 = {.read = WATCH_READ_BYTES, .size = 4, .kind = SIG_I4, .type = "int"};
    uint64_t w5[] = {WATCH_READ_BYTES | 4u << 16, 0xfffffffcu};
    shown(&i4, w5, 2, "-4");
    struct watch_value arr = {.read = WATCH_READ_ARRAY, .kind = SIG_OBJECT, .type = "int[]"};
    uint64_t w6[] = {WATCH_READ_ARRAY | (uint64_t)3 << 32, 0x1000};
    shown(&arr, w6, 2, "int[3]");
    struct watch_value b = {.read = WATCH_READ_BYTES, .size = 1, .kind = SIG_BOOL, .type = "bool"};
    uint64_t w7[] = {WATCH_READ_BYTES | 1u << 16, 1};
    shown(&b, w7, 2, "true");
    /* a payload cut short is refused */
    uint32_t pos = 0;
    struct watch_decoded d;
    CHECK(watch_decode_value(w3, 1, &pos, &d) < 0);
}

/* DateTime, TimeSpan, Guid, enums, arrays' first elements, span lengths. */
static void test_watch_values_more(void)
{
    char t[200];
    /* 2024-02-29T13:45:00 UTC: ticks 638448111000000000, kind 1 */
    watch_format_datetime(638448111000000000ull | 1ull << 62, t, sizeof t);
    CHECK_STR(t, "2024-02-29T13:45:00.0000000Z");
    watch_format_datetime(0, t, sizeof t);
    CHECK_STR(t, "0001-01-01T00:00:00.0000000");
    watch_format_datetime(3155378975999999999ull | 2ull << 62, t, sizeof t);
    CHECK_STR(t, "9999-12-31T23:59:59.9999999 (local)");
    watch_format_datetime(0x3fffffffffffffffull, t, sizeof t); /* past the last day: no date */
    CHECK(strstr(t, "DateTime(ticks") == t);
    watch_format_timespan(54000000000ll, t, sizeof t);
    CHECK_STR(t, "01:30:00");
    watch_format_timespan(-(864000000000ll * 2 + 15000000), t, sizeof t);
    CHECK_STR(t, "-2.00:00:01.5000000");
    watch_format_timespan(INT64_MIN, t, sizeof t);
    CHECK_STR(t, "-10675199.02:48:05.4775808");
    const uint8_t g[16] = {0x5b, 0xad, 0x8f, 0x0f, 0xcb, 0xd9, 0x9f, 0x46,
                           0xa1, 0x65, 0x70, 0x86, 0x77, 0x28, 0x95, 0x0e};
    watch_format_guid(g, t, sizeof t);
    CHECK_STR(t, "0f8fad5b-d9cb-469f-a165-70867728950e");
    struct watch_enum e = {.flags = 1, .count = 4, .values = {0, 1, 2, 4},
                           .names = {"None", "Read", "Write", "Exec"}};
    watch_format_enum(&e, "Access", 3, t, sizeof t);
    CHECK_STR(t, "Read|Write");
    watch_format_enum(&e, "Access", 0, t, sizeof t);
    CHECK_STR(t, "None");
    watch_format_enum(&e, "Access", 8, t, sizeof t); /* no constant covers it */
    CHECK_STR(t, "8");
    e.flags = 0;
    watch_format_enum(&e, "Access", 3, t, sizeof t);
    CHECK_STR(t, "3");
    watch_format_enum(&e, "Access", -1, t, sizeof t);
    CHECK_STR(t, "-1");
    /* arrays: elements from the signature's kind, or the runtime's */
    struct watch_value ints = {.read = WATCH_READ_ARRAY, .kind = SIG_OBJECT, .elem_kind = SIG_I4,
                               .type = "int[]"};
    uint64_t a1[] = {WATCH_READ_ARRAY | 32u << 16 | (uint64_t)10 << 32, 0x1000,
                     1 | 2ull << 32, 3 | 4ull << 32, 5 | 6ull << 32, 7 | 8ull << 32};
    shown(&ints, a1, 6, "int[10] {1, 2, 3, 4, 5, 6, 7, 8, ...}");
    uint64_t a2[] = {WATCH_READ_ARRAY | 8u << 16 | (uint64_t)2 << 32, 0x1000, 5 | 6ull << 32};
    shown(&ints, a2, 3, "int[2] {5, 6}");
    /* a byte[32]: the first 8 shown; a buffer too small for them all still
     * ends the list */
    struct watch_value bytes = {.read = WATCH_READ_ARRAY, .kind = SIG_OBJECT, .elem_kind = SIG_U1,
                                .type = "byte[]"};
    uint64_t b1[] = {WATCH_READ_ARRAY | 32u << 16 | (uint64_t)32 << 32, 0x1000,
                     0x0807060504030201ull, ~0ull, ~0ull, ~0ull};
    shown(&bytes, b1, 6, "byte[32] {1, 2, 3, 4, 5, 6, 7, 8, ...}");
    {
        uint32_t pos = 0;
        struct watch_decoded d;
        char small[24];
        CHECK(watch_decode_value(b1, 6, &pos, &d) == 0);
        watch_format_value(&bytes, &d, small, sizeof small);
        CHECK(strlen(small) > 0 && small[strlen(small) - 1] == '}');
    }
    uint64_t a3[] = {WATCH_READ_ARRAY | 1u << 8};
    shown(&ints, a3, 1, "null");
    struct watch_value strs = {.read = WATCH_READ_STRINGS, .kind = SIG_OBJECT, .type = "string[]"};
    uint64_t s1[] = {WATCH_READ_STRINGS | 3u << 16 | (uint64_t)4 << 32,
                     WATCH_READ_STRING | 1u << 24 | (uint64_t)1 << 32, 'a',
                     WATCH_READ_STRING | 1u << 8,
                     WATCH_READ_STRING | 3u << 24 | (uint64_t)3 << 32, 'c' | 'c' << 16 | (uint64_t)'c' << 32};
    shown(&strs, s1, 6, "string[4] {\"a\", null, \"ccc\", ...}");
    struct watch_value span = {.read = WATCH_READ_BYTES, .size = 16, .kind = SIG_VALUETYPE,
                               .show = WATCH_SHOW_SPAN, .type = "Span"};
    uint64_t sp[] = {WATCH_READ_BYTES | 16u << 16, 0x7fff0000, 3};
    shown(&span, sp, 3, "Span[3]");
    struct watch_value out = {.read = WATCH_READ_OUT, .kind = SIG_BYREF, .byref = 1, .type = "ref string"};
    uint64_t o1[] = {WATCH_READ_OUT};
    shown(&out, o1, 1, "out");
    /* runtime type names shortened */
    watch_short_type("System.Collections.Generic.Dictionary`2[System.String,System.Int32]", t, sizeof t);
    CHECK_STR(t, "Dictionary<String, Int32>");
    watch_short_type("System.Int32[]", t, sizeof t);
    CHECK_STR(t, "Int32[]");
    watch_short_type("WatchApp.Box`1[System.Collections.Generic.List`1[System.Int32]]", t, sizeof t);
    CHECK_STR(t, "Box<List<Int32>>");
    watch_short_type("A.B`1[[C.D]]", t, 6); /* cut short: terminated */
    CHECK(strlen(t) < 6);
}

/* Damaged payloads (the loop decodes what the probes queued): random and
 * cut-short words are refused or shown, never read past their end. */
static void test_watch_values_damaged(void)
{
    struct watch_value plans[] = {
        {.read = WATCH_READ_BYTES, .size = 16, .kind = SIG_VALUETYPE, .show = WATCH_SHOW_DECIMAL},
        {.read = WATCH_READ_BYTES, .size = 8, .kind = SIG_VALUETYPE, .show = WATCH_SHOW_DATETIME},
        {.read = WATCH_READ_BYTES, .size = 16, .kind = SIG_VALUETYPE, .show = WATCH_SHOW_SPAN},
        {.read = WATCH_READ_BYTES, .size = 4, .kind = SIG_I4, .show = WATCH_SHOW_ENUM,
         .enum_index = WATCH_MAX_ENUMS + 5},
        {.read = WATCH_READ_ARRAY, .kind = SIG_OBJECT, .elem_kind = SIG_R8},
        {.read = WATCH_READ_STRINGS, .kind = SIG_OBJECT},
        {.read = WATCH_READ_STRING, .kind = SIG_STRING},
        {.read = WATCH_READ_REF, .kind = SIG_OBJECT},
        {.read = WATCH_READ_OBJECT, .kind = SIG_OBJECT},
        {.read = WATCH_READ_STRUCT, .size = WATCH_FIELD_BYTES, .kind = SIG_VALUETYPE},
    };
    enum { PLANS = sizeof plans / sizeof plans[0] };
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int round = 0; round < 20000; round++) {
        uint64_t w[24];
        uint32_t n = (uint32_t)(round % 24);
        for (uint32_t i = 0; i < 24; i++) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            w[i] = seed;
        }
        /* a plausible header half of the time */
        if (n && round & 1)
            w[0] = (w[0] & ~0xffull) | (uint64_t)(round / 2 % PLANS);
        uint32_t pos = 0;
        struct watch_decoded d;
        char text[300];
        while (pos < n && watch_decode_value(w, n, &pos, &d) == 0) {
            CHECK(pos <= n);
            watch_format_value(&plans[round % PLANS], &d, text, sizeof text);
            CHECK(strlen(text) < sizeof text);
        }
    }
}

/* --fields: an object's payload (MethodTable, its first bytes, the
 * strings its layout named) and a struct's bytes decoded whole; a header
 * claiming more than the payload holds is refused. */
static void test_watch_fields_decode(void)
{
    uint64_t w[16] = {0};
    uint32_t n = 0;
    w[n++] = WATCH_READ_OBJECT | 16ull << 16 | 1ull << 24 | 1ull << 32;
    w[n++] = 0x7f0012345678ull;
    w[n++] = 7;    /* Count */
    w[n++] = 0x4008000000000000ull; /* 3.0 */
    w[n++] = WATCH_READ_STRING | 3ull << 24 | 3ull << 32;
    w[n++] = 'a' | 'n' << 16 | (uint64_t)'n' << 32;
    uint32_t pos = 0;
    struct watch_decoded d;
    REQUIRE(watch_decode_value(w, n, &pos, &d) == 0);
    CHECK_EQ(pos, n);
    CHECK(d.mt == 0x7f0012345678ull && d.nbytes == 16 && d.layout_known && d.strings == 1);
    CHECK(d.string_len[0] == 3 && d.string_chars[0] == 3 && d.string_text[0][2] == 'n');
    pos = 0;
    CHECK(watch_decode_value(w, n - 1, &pos, &d) < 0); /* its string cut off */
    uint64_t s[3] = {WATCH_READ_STRUCT | 12ull << 16, 3 | 4ull << 32, 5};
    pos = 0;
    REQUIRE(watch_decode_value(s, 3, &pos, &d) == 0);
    CHECK(pos == 3 && d.nbytes == 12 && d.bytes[4] == 4 && d.bytes[8] == 5);
    pos = 0;
    CHECK(watch_decode_value(s, 2, &pos, &d) < 0);
    struct watch_value v = {.read = WATCH_READ_STRUCT, .kind = SIG_VALUETYPE, .type = "Vec"};
    char text[64];
    watch_format_value(&v, &d, text, sizeof text);
    CHECK_STR(text, "Vec");
}

/* --where: parsing, binding to a method's arguments, the probe's test on
 * values in place (a fake string object: MethodTable, length, chars). */
static void test_watch_where(void)
{
    struct watch_where_expr e;
    char why[200];
    CHECK(watch_where_parse("qty > 10", &e, why, sizeof why) == 0);
    CHECK_STR(e.name, "qty");
    CHECK(e.op == WHERE_GT && e.literal == WHERE_INT && e.i == 10);
    CHECK(watch_where_parse(" sku contains \"a\\\"b\" ", &e, why, sizeof why) == 0);
    CHECK(e.op == WHERE_CONTAINS && e.literal == WHERE_STRING && e.len == 3);
    CHECK_STR(e.text, "a\"b");
    CHECK(watch_where_parse("w<=-2.5", &e, why, sizeof why) == 0);
    CHECK(e.op == WHERE_LE && e.literal == WHERE_FLOAT && e.f == -2.5);
    CHECK(watch_where_parse("c == Color.Blue", &e, why, sizeof why) == 0);
    CHECK(e.literal == WHERE_NAME);
    CHECK_STR(e.text, "Blue");
    CHECK(watch_where_parse("note != null", &e, why, sizeof why) == 0 && e.literal == WHERE_NULL);
    CHECK(watch_where_parse("amount >= 12.5m", &e, why, sizeof why) == 0 && e.f == 12.5);
    static const char *const bad[] = {
        "", "> 3", "qty", "qty >", "qty > \"open", "qty > 1 && qty < 3", "note > null",
        "sku contains 3", "qty ~ 3", "qty > 1e999", "qty == @",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = '\0';
        CHECK(watch_where_parse(bad[i], &e, why, sizeof why) < 0);
        CHECK(why[0] != '\0');
    }
    /* binding */
    struct watch_method m = {.display = "Pricing.Quote", .params = 2, .taken = 2};
    m.args[0] = (struct watch_value){.read = WATCH_READ_STRING, .kind = SIG_STRING, .name = "sku",
                                     .type = "string"};
    m.args[1] = (struct watch_value){.read = WATCH_READ_BYTES, .size = 4, .kind = SIG_I4,
                                     .name = "qty", .type = "int"};
    m.ret = (struct watch_value){.read = WATCH_READ_BYTES, .size = 16, .kind = SIG_VALUETYPE,
                                 .show = WATCH_SHOW_DECIMAL, .type = "Decimal"};
    CHECK(watch_where_parse("nope == 1", &e, why, sizeof why) == 0);
    CHECK(watch_filter_bind(&e, &m, why, sizeof why) < 0);
    CHECK_STR(why, "Pricing.Quote has no argument 'nope' (its arguments: sku, qty; result)");
    CHECK(watch_where_parse("sku > 1", &e, why, sizeof why) == 0);
    CHECK(watch_filter_bind(&e, &m, why, sizeof why) < 0);
    CHECK(watch_where_parse("qty > 2", &e, why, sizeof why) == 0);
    CHECK(watch_filter_bind(&e, &m, why, sizeof why) == 0 && m.filter.arg == 1);
    int32_t qty = 4;
    void *home = &qty;
    CHECK(watch_filter_keeps(&m.filter, &m.args[1], home));
    qty = -7;
    CHECK(!watch_filter_keeps(&m.filter, &m.args[1], home));
    /* result: a decimal 9.00 */
    CHECK(watch_where_parse("result >= 9", &e, why, sizeof why) == 0);
    CHECK(watch_filter_bind(&e, &m, why, sizeof why) == 0 && m.filter.arg == WATCH_FILTER_RESULT);
    uint32_t dec[4] = {2u << 16, 0, 900, 0};
    CHECK(watch_filter_keeps(&m.filter, &m.ret, dec));
    dec[2] = 899;
    CHECK(!watch_filter_keeps(&m.filter, &m.ret, dec));
    /* strings in place */
    _Alignas(8) uint8_t obj[12 + 2 * 5] = {0};
    int32_t len = 5;
    memcpy(obj + 8, &len, 4);
    const char *hello = "sku-1";
    for (int i = 0; i < 5; i++)
        obj[12 + 2 * i] = (uint8_t)hello[i];
    const void *ref = obj, *null_ref = NULL;
    CHECK(watch_where_parse("sku contains \"u-1\"", &e, why, sizeof why) == 0);
    CHECK(watch_filter_bind(&e, &m, why, sizeof why) == 0);
    CHECK(watch_filter_keeps(&m.filter, &m.args[0], &ref));
    CHECK(!watch_filter_keeps(&m.filter, &m.args[0], &null_ref));
    CHECK(watch_where_parse("sku == \"sku-1\"", &e, why, sizeof why) == 0);
    CHECK(watch_filter_bind(&e, &m, why, sizeof why) == 0);
    CHECK(watch_filter_keeps(&m.filter, &m.args[0], &ref));
    CHECK(watch_where_parse("sku == \"sku-\"", &e, why, sizeof why) == 0);
    CHECK(watch_filter_bind(&e, &m, why, sizeof why) == 0);
    CHECK(!watch_filter_keeps(&m.filter, &m.args[0], &ref));
    CHECK(watch_where_parse("sku == null", &e, why, sizeof why) == 0);
    CHECK(watch_filter_bind(&e, &m, why, sizeof why) == 0);
    CHECK(watch_filter_keeps(&m.filter, &m.args[0], &null_ref));
    CHECK(!watch_filter_keeps(&m.filter, &m.args[0], &ref));
}

void suite_sig(void)
{
    RUN(test_sig_static_method);
    RUN(test_sig_instance_generic);
    RUN(test_sig_modifiers);
    RUN(test_sig_damaged);
    RUN(test_sig_locals_append);
    RUN(test_sig_compress);
    RUN(test_watch_values);
    RUN(test_watch_values_more);
    RUN(test_watch_values_damaged);
    RUN(test_watch_fields_decode);
    RUN(test_watch_where);
}
