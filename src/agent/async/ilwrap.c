/*
 * ilwrap: see ilwrap.h.  The snippets; the engine does the rest.
 */
#include "agent/async/ilwrap.h"

#include <string.h>

#include "common/pdb/sig.h"

long ilwrap_locals(const uint8_t *sig, size_t len, uint8_t *out, size_t cap, size_t *out_len)
{
    static const uint8_t native_int[] = {0x18}, object[] = {0x1c};
    const struct sig_type add[] = {
        {.kind = SIG_I, .bytes = native_int, .len = 1},
        {.kind = SIG_I, .bytes = native_int, .len = 1},
        {.kind = SIG_OBJECT, .bytes = object, .len = 1},
    };
    return sig_locals_append(sig, len, add, 3, out, cap, out_len);
}

static size_t local_op(uint8_t *p, uint8_t op2, uint32_t index)
{
    p[0] = 0xfe;
    p[1] = op2;
    p[2] = (uint8_t)index;
    p[3] = (uint8_t)(index >> 8);
    return 4;
}
#define LDLOC 0x0c
#define LDLOCA 0x0d
#define STLOC 0x0e

static size_t entry_code(uint8_t *p, const struct ilwrap_in *in)
{
    uint32_t s = in->first_local, prev = s + 1, box = s + 2;
    size_t n = 0;
    p[n++] = 0x21; /* ldc.i8 */
    for (int i = 0; i < 8; i++)
        p[n++] = (uint8_t)(in->slot_fn >> (8 * i));
    p[n++] = 0xd3; /* conv.i */
    p[n++] = 0x29; /* calli */
    for (int i = 0; i < 4; i++)
        p[n++] = (uint8_t)(in->calli_token >> (8 * i));
    n += local_op(p + n, STLOC, s);
    n += local_op(p + n, LDLOC, s);
    p[n++] = 0x4d; /* ldind.i */
    n += local_op(p + n, STLOC, prev);
    p[n++] = 0x02; /* ldarg.0 */
    n += local_op(p + n, STLOC, box);
    n += local_op(p + n, LDLOC, s);
    n += local_op(p + n, LDLOCA, box);
    p[n++] = 0xe0; /* conv.u */
    p[n++] = 0xdf; /* stind.i */
    return n;
}

static size_t finally_code(uint8_t *p, const struct ilwrap_in *in)
{
    size_t n = 0;
    n += local_op(p + n, LDLOC, in->first_local);
    n += local_op(p + n, LDLOC, in->first_local + 1);
    p[n++] = 0xdf; /* stind.i */
    return n;
}

int ilwrap_publish(const struct ilwrap_in *in, struct il_rewritten *out, char *why,
                   size_t why_size)
{
    memset(out, 0, sizeof *out);
    if (in->first_local > 0xffff - 3)
        return il_why(why, why_size, "too many locals");
    struct il_body body;
    if (il_parse(in->method, in->size, &body, why, why_size) < 0)
        return -1;
    struct il_edit edit;
    il_edit_init(&edit);
    uint8_t entry[64], fin[16];
    size_t entry_len = entry_code(entry, in), fin_len = finally_code(fin, in);
    il_edit_set_locals(&edit, in->locals_token);
    int rc = -1;
    if (il_edit_add(&edit, &body, 0, IL_ENTRY, 0, entry, (uint32_t)entry_len, 2, why,
                    why_size) == 0 &&
        il_edit_wrap(&edit, &body, IL_CLAUSE_FINALLY, fin, (uint32_t)fin_len, 2, IL_NO_RESULT,
                     why, why_size) == 0 &&
        il_rewrite(&body, &edit, out, why, why_size) == 0) {
        rc = il_check(&body, &edit, out, why, why_size);
        if (rc < 0)
            il_rewritten_free(out);
    }
    il_edit_free(&edit);
    il_body_free(&body);
    return rc;
}
