/*
 * il_op: the opcode table of ECMA-335 partition III (one-byte opcodes and
 * the 0xFE-prefixed ones), with each opcode's operand and its effect on
 * the flow of control.
 */
#include "agent/il/il.h"

#define N IL_OPERAND_NONE
#define U8 IL_OPERAND_U8
#define I8 IL_OPERAND_I8
#define U16 IL_OPERAND_U16
#define I32 IL_OPERAND_I32
#define I64 IL_OPERAND_I64
#define R32 IL_OPERAND_R32
#define R64 IL_OPERAND_R64
#define TOK IL_OPERAND_TOKEN
#define BR8 IL_OPERAND_BR8
#define BR32 IL_OPERAND_BR32
#define SW IL_OPERAND_SWITCH

#define NEXT IL_FLOW_NEXT
#define BRANCH IL_FLOW_BRANCH
#define COND IL_FLOW_COND
#define RET IL_FLOW_RETURN
#define THROW IL_FLOW_THROW
#define END IL_FLOW_END
#define PREFIX IL_FLOW_PREFIX

static const struct il_opcode one[256] = {
    [0x00] = {"nop", N, NEXT},          [0x01] = {"break", N, NEXT},
    [0x02] = {"ldarg.0", N, NEXT},      [0x03] = {"ldarg.1", N, NEXT},
    [0x04] = {"ldarg.2", N, NEXT},      [0x05] = {"ldarg.3", N, NEXT},
    [0x06] = {"ldloc.0", N, NEXT},      [0x07] = {"ldloc.1", N, NEXT},
    [0x08] = {"ldloc.2", N, NEXT},      [0x09] = {"ldloc.3", N, NEXT},
    [0x0a] = {"stloc.0", N, NEXT},      [0x0b] = {"stloc.1", N, NEXT},
    [0x0c] = {"stloc.2", N, NEXT},      [0x0d] = {"stloc.3", N, NEXT},
    [0x0e] = {"ldarg.s", U8, NEXT},     [0x0f] = {"ldarga.s", U8, NEXT},
    [0x10] = {"starg.s", U8, NEXT},     [0x11] = {"ldloc.s", U8, NEXT},
    [0x12] = {"ldloca.s", U8, NEXT},    [0x13] = {"stloc.s", U8, NEXT},
    [0x14] = {"ldnull", N, NEXT},       [0x15] = {"ldc.i4.m1", N, NEXT},
    [0x16] = {"ldc.i4.0", N, NEXT},     [0x17] = {"ldc.i4.1", N, NEXT},
    [0x18] = {"ldc.i4.2", N, NEXT},     [0x19] = {"ldc.i4.3", N, NEXT},
    [0x1a] = {"ldc.i4.4", N, NEXT},     [0x1b] = {"ldc.i4.5", N, NEXT},
    [0x1c] = {"ldc.i4.6", N, NEXT},     [0x1d] = {"ldc.i4.7", N, NEXT},
    [0x1e] = {"ldc.i4.8", N, NEXT},     [0x1f] = {"ldc.i4.s", I8, NEXT},
    [0x20] = {"ldc.i4", I32, NEXT},     [0x21] = {"ldc.i8", I64, NEXT},
    [0x22] = {"ldc.r4", R32, NEXT},     [0x23] = {"ldc.r8", R64, NEXT},
    [0x25] = {"dup", N, NEXT},          [0x26] = {"pop", N, NEXT},
    [0x27] = {"jmp", TOK, RET},         [0x28] = {"call", TOK, NEXT},
    [0x29] = {"calli", TOK, NEXT},      [0x2a] = {"ret", N, RET},
    [0x2b] = {"br.s", BR8, BRANCH},     [0x2c] = {"brfalse.s", BR8, COND},
    [0x2d] = {"brtrue.s", BR8, COND},   [0x2e] = {"beq.s", BR8, COND},
    [0x2f] = {"bge.s", BR8, COND},      [0x30] = {"bgt.s", BR8, COND},
    [0x31] = {"ble.s", BR8, COND},      [0x32] = {"blt.s", BR8, COND},
    [0x33] = {"bne.un.s", BR8, COND},   [0x34] = {"bge.un.s", BR8, COND},
    [0x35] = {"bgt.un.s", BR8, COND},   [0x36] = {"ble.un.s", BR8, COND},
    [0x37] = {"blt.un.s", BR8, COND},   [0x38] = {"br", BR32, BRANCH},
    [0x39] = {"brfalse", BR32, COND},   [0x3a] = {"brtrue", BR32, COND},
    [0x3b] = {"beq", BR32, COND},       [0x3c] = {"bge", BR32, COND},
    [0x3d] = {"bgt", BR32, COND},       [0x3e] = {"ble", BR32, COND},
    [0x3f] = {"blt", BR32, COND},       [0x40] = {"bne.un", BR32, COND},
    [0x41] = {"bge.un", BR32, COND},    [0x42] = {"bgt.un", BR32, COND},
    [0x43] = {"ble.un", BR32, COND},    [0x44] = {"blt.un", BR32, COND},
    [0x45] = {"switch", SW, COND},      [0x46] = {"ldind.i1", N, NEXT},
    [0x47] = {"ldind.u1", N, NEXT},     [0x48] = {"ldind.i2", N, NEXT},
    [0x49] = {"ldind.u2", N, NEXT},     [0x4a] = {"ldind.i4", N, NEXT},
    [0x4b] = {"ldind.u4", N, NEXT},     [0x4c] = {"ldind.i8", N, NEXT},
    [0x4d] = {"ldind.i", N, NEXT},      [0x4e] = {"ldind.r4", N, NEXT},
    [0x4f] = {"ldind.r8", N, NEXT},     [0x50] = {"ldind.ref", N, NEXT},
    [0x51] = {"stind.ref", N, NEXT},    [0x52] = {"stind.i1", N, NEXT},
    [0x53] = {"stind.i2", N, NEXT},     [0x54] = {"stind.i4", N, NEXT},
    [0x55] = {"stind.i8", N, NEXT},     [0x56] = {"stind.r4", N, NEXT},
    [0x57] = {"stind.r8", N, NEXT},     [0x58] = {"add", N, NEXT},
    [0x59] = {"sub", N, NEXT},          [0x5a] = {"mul", N, NEXT},
    [0x5b] = {"div", N, NEXT},          [0x5c] = {"div.un", N, NEXT},
    [0x5d] = {"rem", N, NEXT},          [0x5e] = {"rem.un", N, NEXT},
    [0x5f] = {"and", N, NEXT},          [0x60] = {"or", N, NEXT},
    [0x61] = {"xor", N, NEXT},          [0x62] = {"shl", N, NEXT},
    [0x63] = {"shr", N, NEXT},          [0x64] = {"shr.un", N, NEXT},
    [0x65] = {"neg", N, NEXT},          [0x66] = {"not", N, NEXT},
    [0x67] = {"conv.i1", N, NEXT},      [0x68] = {"conv.i2", N, NEXT},
    [0x69] = {"conv.i4", N, NEXT},      [0x6a] = {"conv.i8", N, NEXT},
    [0x6b] = {"conv.r4", N, NEXT},      [0x6c] = {"conv.r8", N, NEXT},
    [0x6d] = {"conv.u4", N, NEXT},      [0x6e] = {"conv.u8", N, NEXT},
    [0x6f] = {"callvirt", TOK, NEXT},   [0x70] = {"cpobj", TOK, NEXT},
    [0x71] = {"ldobj", TOK, NEXT},      [0x72] = {"ldstr", TOK, NEXT},
    [0x73] = {"newobj", TOK, NEXT},     [0x74] = {"castclass", TOK, NEXT},
    [0x75] = {"isinst", TOK, NEXT},     [0x76] = {"conv.r.un", N, NEXT},
    [0x79] = {"unbox", TOK, NEXT},      [0x7a] = {"throw", N, THROW},
    [0x7b] = {"ldfld", TOK, NEXT},      [0x7c] = {"ldflda", TOK, NEXT},
    [0x7d] = {"stfld", TOK, NEXT},      [0x7e] = {"ldsfld", TOK, NEXT},
    [0x7f] = {"ldsflda", TOK, NEXT},    [0x80] = {"stsfld", TOK, NEXT},
    [0x81] = {"stobj", TOK, NEXT},      [0x82] = {"conv.ovf.i1.un", N, NEXT},
    [0x83] = {"conv.ovf.i2.un", N, NEXT}, [0x84] = {"conv.ovf.i4.un", N, NEXT},
    [0x85] = {"conv.ovf.i8.un", N, NEXT}, [0x86] = {"conv.ovf.u1.un", N, NEXT},
    [0x87] = {"conv.ovf.u2.un", N, NEXT}, [0x88] = {"conv.ovf.u4.un", N, NEXT},
    [0x89] = {"conv.ovf.u8.un", N, NEXT}, [0x8a] = {"conv.ovf.i.un", N, NEXT},
    [0x8b] = {"conv.ovf.u.un", N, NEXT}, [0x8c] = {"box", TOK, NEXT},
    [0x8d] = {"newarr", TOK, NEXT},     [0x8e] = {"ldlen", N, NEXT},
    [0x8f] = {"ldelema", TOK, NEXT},    [0x90] = {"ldelem.i1", N, NEXT},
    [0x91] = {"ldelem.u1", N, NEXT},    [0x92] = {"ldelem.i2", N, NEXT},
    [0x93] = {"ldelem.u2", N, NEXT},    [0x94] = {"ldelem.i4", N, NEXT},
    [0x95] = {"ldelem.u4", N, NEXT},    [0x96] = {"ldelem.i8", N, NEXT},
    [0x97] = {"ldelem.i", N, NEXT},     [0x98] = {"ldelem.r4", N, NEXT},
    [0x99] = {"ldelem.r8", N, NEXT},    [0x9a] = {"ldelem.ref", N, NEXT},
    [0x9b] = {"stelem.i", N, NEXT},     [0x9c] = {"stelem.i1", N, NEXT},
    [0x9d] = {"stelem.i2", N, NEXT},    [0x9e] = {"stelem.i4", N, NEXT},
    [0x9f] = {"stelem.i8", N, NEXT},    [0xa0] = {"stelem.r4", N, NEXT},
    [0xa1] = {"stelem.r8", N, NEXT},    [0xa2] = {"stelem.ref", N, NEXT},
    [0xa3] = {"ldelem", TOK, NEXT},     [0xa4] = {"stelem", TOK, NEXT},
    [0xa5] = {"unbox.any", TOK, NEXT},  [0xb3] = {"conv.ovf.i1", N, NEXT},
    [0xb4] = {"conv.ovf.u1", N, NEXT},  [0xb5] = {"conv.ovf.i2", N, NEXT},
    [0xb6] = {"conv.ovf.u2", N, NEXT},  [0xb7] = {"conv.ovf.i4", N, NEXT},
    [0xb8] = {"conv.ovf.u4", N, NEXT},  [0xb9] = {"conv.ovf.i8", N, NEXT},
    [0xba] = {"conv.ovf.u8", N, NEXT},  [0xc2] = {"refanyval", TOK, NEXT},
    [0xc3] = {"ckfinite", N, NEXT},     [0xc6] = {"mkrefany", TOK, NEXT},
    [0xd0] = {"ldtoken", TOK, NEXT},    [0xd1] = {"conv.u2", N, NEXT},
    [0xd2] = {"conv.u1", N, NEXT},      [0xd3] = {"conv.i", N, NEXT},
    [0xd4] = {"conv.ovf.i", N, NEXT},   [0xd5] = {"conv.ovf.u", N, NEXT},
    [0xd6] = {"add.ovf", N, NEXT},      [0xd7] = {"add.ovf.un", N, NEXT},
    [0xd8] = {"mul.ovf", N, NEXT},      [0xd9] = {"mul.ovf.un", N, NEXT},
    [0xda] = {"sub.ovf", N, NEXT},      [0xdb] = {"sub.ovf.un", N, NEXT},
    [0xdc] = {"endfinally", N, END},    [0xdd] = {"leave", BR32, BRANCH},
    [0xde] = {"leave.s", BR8, BRANCH},  [0xdf] = {"stind.i", N, NEXT},
    [0xe0] = {"conv.u", N, NEXT},
};

static const struct il_opcode two[0x1f] = {
    [0x00] = {"arglist", N, NEXT},      [0x01] = {"ceq", N, NEXT},
    [0x02] = {"cgt", N, NEXT},          [0x03] = {"cgt.un", N, NEXT},
    [0x04] = {"clt", N, NEXT},          [0x05] = {"clt.un", N, NEXT},
    [0x06] = {"ldftn", TOK, NEXT},      [0x07] = {"ldvirtftn", TOK, NEXT},
    [0x09] = {"ldarg", U16, NEXT},      [0x0a] = {"ldarga", U16, NEXT},
    [0x0b] = {"starg", U16, NEXT},      [0x0c] = {"ldloc", U16, NEXT},
    [0x0d] = {"ldloca", U16, NEXT},     [0x0e] = {"stloc", U16, NEXT},
    [0x0f] = {"localloc", N, NEXT},     [0x11] = {"endfilter", N, END},
    [0x12] = {"unaligned.", U8, PREFIX}, [0x13] = {"volatile.", N, PREFIX},
    [0x14] = {"tail.", N, PREFIX},      [0x15] = {"initobj", TOK, NEXT},
    [0x16] = {"constrained.", TOK, PREFIX}, [0x17] = {"cpblk", N, NEXT},
    [0x18] = {"initblk", N, NEXT},      [0x19] = {"no.", U8, PREFIX},
    [0x1a] = {"rethrow", N, THROW},     [0x1c] = {"sizeof", TOK, NEXT},
    [0x1d] = {"refanytype", N, NEXT},   [0x1e] = {"readonly.", N, PREFIX},
};

const struct il_opcode *il_opcode(uint16_t op)
{
    const struct il_opcode *o = NULL;
    if (op < 0x100)
        o = &one[op];
    else if ((op & 0xff00) == 0xfe00 && (op & 0xff) < sizeof two / sizeof two[0])
        o = &two[op & 0xff];
    return o && o->name ? o : NULL;
}
