/*
 * repair: see repair.h.
 */
#include "agent/repair.h"

#include <dlfcn.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "agent/signal/leaf.h"
#include "common/map.h"

static struct map64 leaf_cache; /* leaf pc -> where its return address is, + 1 */

void repair_init(void)
{
    map64_init(&leaf_cache);
}

void repair_free(void)
{
    map64_free(&leaf_cache);
}

void repair_forget(void)
{
    map64_clear(&leaf_cache);
}

static size_t read_code(uintptr_t at, uint8_t *out, size_t n)
{
    /* through the kernel, so that code unloaded meanwhile is an error, not
     * a crash */
    struct iovec local = {out, n}, remote = {(void *)at, n};
    ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    return got < 0 ? 0 : (size_t)got;
}

uintptr_t repair_leaf_caller(const struct code_range *range, uintptr_t pc, const uint64_t *top,
                             uint32_t top_words)
{
    /* the answer depends only on the code at pc: cached per pc (code never
     * changes under an address until it is unloaded, which clears the cache)
     * as offset + 1, or 0 when the walk was right */
    uint32_t cached;
    if (!map64_get(&leaf_cache, pc, &cached)) {
        uint8_t prologue[64], at_pc[32];
        size_t np = read_code(range->method_start, prologue, sizeof prologue);
        size_t na = read_code(pc, at_pc, sizeof at_pc);
        uint32_t offset = 0;
        enum leaf_answer answer =
            leaf_analyze(prologue, np, at_pc, na, pc - range->method_start, &offset);
        cached = answer == LEAF_RA_AT && offset % 8 == 0 ? offset + 1 : 0;
        map64_put(&leaf_cache, pc, cached);
    }
    if (!cached || (cached - 1) / 8 >= top_words)
        return 0;
    return (uintptr_t)top[(cached - 1) / 8];
}

/* The OSR method's frame sits below its tier-0 frame, its return address
 * points into the tier-0 code (ips[1], the same method), and the frame
 * pointer it saved is the one of the tier-0 frame's caller.  The tier-0
 * frame still holds the pair (that saved frame pointer, return address into
 * the caller) a few words up the stack.  A recursion across tiers (tier-1
 * code called by its own tier-0 code) never matches: there the saved frame
 * pointer is the address of the tier-0 frame, not a value stored in it. */
uintptr_t repair_osr_leaf_caller(uint64_t rsp, uint64_t rbp, const uint64_t *top,
                                 uint32_t top_words, const uint64_t *ips, uint32_t depth)
{
    if (depth < 2)
        return 0;
    const struct code_range *leaf = codemap_find((uintptr_t)ips[0]);
    const struct code_range *tier0 = codemap_find((uintptr_t)ips[1] - 1);
    if (!leaf || !tier0 || leaf->function != tier0->function ||
        leaf->method_start == tier0->method_start)
        return 0;
    if (rbp < rsp || (rbp - rsp) % 8 || (rbp - rsp) / 8 + 1 >= top_words)
        return 0;
    uint32_t at = (uint32_t)((rbp - rsp) / 8);
    uint64_t saved_fp = top[at];
    for (uint32_t j = at + 2; j + 1 < top_words; j++) {
        if (top[j] == saved_fp && codemap_find((uintptr_t)top[j + 1] - 1))
            return (uintptr_t)top[j + 1];
    }
    return 0;
}

/* The same method as ips[k], in another code version, right after the
 * tier-0 code's call to the runtime's patchpoint helper (a direct call into
 * native code).  A genuine recursive call is a call to managed code
 * (through an indirection cell or a stub), so it never matches. */
int repair_osr_pseudo_frame(const uint64_t *ips, uint32_t k)
{
    const struct code_range *a = codemap_find((uintptr_t)ips[k] - (k > 0));
    const struct code_range *b = codemap_find((uintptr_t)ips[k + 1] - 1);
    if (!a || !b || a->function != b->function || a->method_start == b->method_start)
        return 0;
    uint8_t call[5];
    if (read_code((uintptr_t)ips[k + 1] - 5, call, 5) != 5 || call[0] != 0xe8)
        return 0;
    int32_t rel;
    memcpy(&rel, call + 1, 4);
    uintptr_t target = (uintptr_t)ips[k + 1] + (uintptr_t)(intptr_t)rel;
    Dl_info info;
    return !codemap_find(target) && dladdr((void *)target, &info) && info.dli_fbase;
}
