/*
 * inflate: see inflate.h.
 *
 * A deflate stream is a series of blocks, each stored (copied), or coded
 * with the fixed Huffman codes of the RFC, or with codes the block itself
 * describes.  Symbols 0..255 are literal bytes, 256 ends the block, 257..285
 * are lengths followed by a distance back into what was already written.
 * Bits are read least significant first; Huffman codes most significant
 * first, which is why decode() builds them one bit at a time.
 */
#include "common/inflate.h"

#include <string.h>

#define MAX_BITS 15
#define MAX_LITLEN 288
#define MAX_DIST 32

struct state {
    const uint8_t *in;
    size_t in_len, in_pos;
    uint8_t *out;
    size_t out_size, out_pos;
    uint32_t bitbuf; /* bits not yet used, low first */
    int bitcnt;
    const char *why;
};

/* A canonical Huffman code: how many codes of each length, and the symbols
 * in code order. */
struct huffman {
    uint16_t count[MAX_BITS + 1];
    uint16_t symbol[MAX_LITLEN];
};

static int fail(struct state *s, const char *why)
{
    if (!s->why)
        s->why = why;
    return -1;
}

/* `need` bits (0..16) from the stream, or -1 past its end. */
static int bits(struct state *s, int need)
{
    uint32_t val = s->bitbuf;
    while (s->bitcnt < need) {
        if (s->in_pos >= s->in_len)
            return fail(s, "the stream ends early");
        val |= (uint32_t)s->in[s->in_pos++] << s->bitcnt;
        s->bitcnt += 8;
    }
    s->bitbuf = val >> need;
    s->bitcnt -= need;
    return (int)(val & ((1u << need) - 1));
}

/* One symbol of code h, or -1. */
static int decode(struct state *s, const struct huffman *h)
{
    int code = 0, first = 0, index = 0;
    for (int len = 1; len <= MAX_BITS; len++) {
        int b = bits(s, 1);
        if (b < 0)
            return -1;
        code |= b;
        int count = h->count[len];
        if (code - count < first)
            return h->symbol[index + (code - first)];
        index += count;
        first += count;
        first <<= 1;
        code <<= 1;
    }
    return fail(s, "a code that no table defines");
}

/* Builds the code for n symbols from their lengths.  Returns 0 for a
 * complete code, > 0 for an incomplete one (usable: a code that is never
 * sent decodes as an error), -1 for an over-subscribed one. */
static int construct(struct huffman *h, const uint8_t *length, int n)
{
    memset(h->count, 0, sizeof h->count);
    for (int sym = 0; sym < n; sym++)
        h->count[length[sym]]++;
    if (h->count[0] == n)
        return 0; /* no codes: complete, and every decode fails */
    int left = 1;
    for (int len = 1; len <= MAX_BITS; len++) {
        left <<= 1;
        left -= h->count[len];
        if (left < 0)
            return -1;
    }
    uint16_t offs[MAX_BITS + 1];
    offs[1] = 0;
    for (int len = 1; len < MAX_BITS; len++)
        offs[len + 1] = (uint16_t)(offs[len] + h->count[len]);
    for (int sym = 0; sym < n; sym++)
        if (length[sym] != 0)
            h->symbol[offs[length[sym]]++] = (uint16_t)sym;
    return left;
}

static int stored(struct state *s)
{
    s->bitbuf = 0; /* to a byte boundary */
    s->bitcnt = 0;
    if (s->in_len - s->in_pos < 4)
        return fail(s, "the stream ends early");
    unsigned len = s->in[s->in_pos] | (unsigned)s->in[s->in_pos + 1] << 8;
    unsigned nlen = s->in[s->in_pos + 2] | (unsigned)s->in[s->in_pos + 3] << 8;
    s->in_pos += 4;
    if (len != (~nlen & 0xffffu))
        return fail(s, "a stored block's length is not its complement's");
    if (s->in_len - s->in_pos < len)
        return fail(s, "the stream ends early");
    if (s->out_size - s->out_pos < len)
        return fail(s, "more output than expected");
    memcpy(s->out + s->out_pos, s->in + s->in_pos, len);
    s->in_pos += len;
    s->out_pos += len;
    return 0;
}

static const uint16_t len_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {1,    2,    3,    4,    5,    7,     9,     13,    17,  25,
                                       33,   49,   65,   97,   129,  193,   257,   385,   513, 769,
                                       1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                       6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

/* The symbols of one coded block, up to its end code. */
static int codes(struct state *s, const struct huffman *lencode, const struct huffman *distcode)
{
    for (;;) {
        int sym = decode(s, lencode);
        if (sym < 0)
            return -1;
        if (sym < 256) {
            if (s->out_pos >= s->out_size)
                return fail(s, "more output than expected");
            s->out[s->out_pos++] = (uint8_t)sym;
            continue;
        }
        if (sym == 256)
            return 0;
        sym -= 257;
        if (sym >= 29)
            return fail(s, "an invalid length code");
        int extra = bits(s, len_extra[sym]);
        if (extra < 0)
            return -1;
        size_t len = len_base[sym] + (size_t)extra;
        int dsym = decode(s, distcode);
        if (dsym < 0)
            return -1;
        if (dsym >= 30)
            return fail(s, "an invalid distance code");
        extra = bits(s, dist_extra[dsym]);
        if (extra < 0)
            return -1;
        size_t dist = dist_base[dsym] + (size_t)extra;
        if (dist > s->out_pos)
            return fail(s, "a distance back past the start of the output");
        if (s->out_size - s->out_pos < len)
            return fail(s, "more output than expected");
        /* byte by byte: the copy may overlap what it writes */
        for (size_t i = 0; i < len; i++, s->out_pos++)
            s->out[s->out_pos] = s->out[s->out_pos - dist];
    }
}

static int fixed(struct state *s)
{
    /* built per block: a few hundred steps, and no shared state */
    struct huffman lencode, distcode;
    uint8_t lengths[MAX_LITLEN];
    int sym = 0;
    for (; sym < 144; sym++)
        lengths[sym] = 8;
    for (; sym < 256; sym++)
        lengths[sym] = 9;
    for (; sym < 280; sym++)
        lengths[sym] = 7;
    for (; sym < MAX_LITLEN; sym++)
        lengths[sym] = 8;
    construct(&lencode, lengths, MAX_LITLEN);
    for (sym = 0; sym < MAX_DIST; sym++)
        lengths[sym] = 5;
    construct(&distcode, lengths, MAX_DIST);
    return codes(s, &lencode, &distcode);
}

static int dynamic(struct state *s)
{
    static const uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    int nlen = bits(s, 5), ndist = bits(s, 5), ncode = bits(s, 4);
    if (nlen < 0 || ndist < 0 || ncode < 0)
        return -1;
    nlen += 257;
    ndist += 1;
    ncode += 4;
    if (nlen > 286 || ndist > 30)
        return fail(s, "too many codes in a dynamic block");
    uint8_t lengths[MAX_LITLEN + MAX_DIST];
    memset(lengths, 0, sizeof lengths);
    for (int i = 0; i < ncode; i++) {
        int b = bits(s, 3);
        if (b < 0)
            return -1;
        lengths[order[i]] = (uint8_t)b;
    }
    struct huffman lencode, distcode;
    if (construct(&lencode, lengths, 19) != 0)
        return fail(s, "an incomplete or over-subscribed code-length code");
    int index = 0;
    while (index < nlen + ndist) {
        int sym = decode(s, &lencode);
        if (sym < 0)
            return -1;
        if (sym < 16) {
            lengths[index++] = (uint8_t)sym;
            continue;
        }
        uint8_t len = 0;
        int rep;
        if (sym == 16) {
            if (index == 0)
                return fail(s, "a repeat with nothing to repeat");
            len = lengths[index - 1];
            rep = bits(s, 2);
            rep = rep < 0 ? -1 : 3 + rep;
        } else if (sym == 17) {
            rep = bits(s, 3);
            rep = rep < 0 ? -1 : 3 + rep;
        } else {
            rep = bits(s, 7);
            rep = rep < 0 ? -1 : 11 + rep;
        }
        if (rep < 0)
            return -1;
        if (index + rep > nlen + ndist)
            return fail(s, "code lengths past the count");
        while (rep--)
            lengths[index++] = len;
    }
    if (lengths[256] == 0)
        return fail(s, "no end-of-block code");
    int err = construct(&lencode, lengths, nlen);
    if (err < 0 || (err > 0 && nlen - lencode.count[0] != 1))
        return fail(s, "an incomplete or over-subscribed literal/length code");
    err = construct(&distcode, lengths + nlen, ndist);
    if (err < 0 || (err > 0 && ndist - distcode.count[0] != 1))
        return fail(s, "an incomplete or over-subscribed distance code");
    return codes(s, &lencode, &distcode);
}

int inflate_raw(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_size, size_t *produced,
                const char **why)
{
    struct state s = {.in = in, .in_len = in_len, .out = out, .out_size = out_size};
    int last, rc = 0;
    do {
        last = bits(&s, 1);
        int type = bits(&s, 2);
        if (last < 0 || type < 0) {
            rc = -1;
            break;
        }
        if (type == 0)
            rc = stored(&s);
        else if (type == 1)
            rc = fixed(&s);
        else if (type == 2)
            rc = dynamic(&s);
        else
            rc = fail(&s, "a block of the reserved type 3");
    } while (rc == 0 && !last);
    if (produced)
        *produced = s.out_pos;
    if (why)
        *why = rc == 0 ? NULL : (s.why ? s.why : "a malformed stream");
    return rc;
}
