/*
 * fuzz_leaf: the prologue/epilogue decoder (agent/signal/leaf.c) over
 * arbitrary machine code.
 *
 * The collector decodes the first bytes of a JIT-compiled method and the
 * bytes at the interrupted pc to find a frameless leaf's return address.
 * The input is a method's code from its first byte; it is analysed as the
 * collector does (the first 64 bytes as the prologue, 32 bytes read at the
 * pc, each shortened where the code ends) with the pc at every offset of
 * the first 256 bytes.  The answer must be one of the three, and an
 * offset is only given with LEAF_RA_AT.  Seeds: methods' code bytes
 * captured from the runtime's JIT (tests/fuzz/seeds.sh).
 *
 * Kept small on purpose: leaf.c is about to become a fuller decoder, and
 * this harness with it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "agent/signal/leaf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t prologue = size < 64 ? size : 64;
    for (size_t pc = 0; pc <= size && pc < 256; pc++) {
        size_t at_pc = size - pc < 32 ? size - pc : 32;
        uint32_t offset = 0xdeadbeef;
        enum leaf_answer a = leaf_analyze(data, prologue, data + pc, at_pc, pc, &offset);
        if (a != LEAF_OWN_FRAME && a != LEAF_RA_AT && a != LEAF_UNKNOWN)
            abort();
        if (a != LEAF_RA_AT && offset != 0xdeadbeef)
            abort(); /* an offset only with the answer that has one */
    }
    return 0;
}
