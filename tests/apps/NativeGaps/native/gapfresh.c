/*
 * A native library built without frame pointers (-O2
 * -fomit-frame-pointer), with ordinary unwind tables, that the runtime
 * loads at run time (dlopen, for DllImport): an object the loader may
 * unload.  Its 64 functions are each run for a few milliseconds in turn,
 * so most of its samples are the first in their function, before the
 * agent's cache has that function's CFI: the case of a P/Invoked library
 * or ICU met briefly at a process's start.  Frame pointers cannot walk
 * through it, nor can a look for the return address on top of the stack
 * (each keeps 512 bytes of locals below it): only its CFI, read where it
 * is mapped, can.
 */
#define SPIN(k)                                                                                    \
    __attribute__((noinline)) long fresh_##k(long n)                                               \
    {                                                                                              \
        volatile long x[64];                                                                       \
        for (long i = 0; i < n; i++)                                                               \
            x[i & 63] += i ^ 0##k;                                                                 \
        return x[n & 63];                                                                          \
    }
#define EIGHT(a) SPIN(a##0) SPIN(a##1) SPIN(a##2) SPIN(a##3) SPIN(a##4) SPIN(a##5) SPIN(a##6) SPIN(a##7)
EIGHT(0) EIGHT(1) EIGHT(2) EIGHT(3) EIGHT(4) EIGHT(5) EIGHT(6) EIGHT(7)

#define NAME(k) fresh_##k,
#define NAMES(a) NAME(a##0) NAME(a##1) NAME(a##2) NAME(a##3) NAME(a##4) NAME(a##5) NAME(a##6) NAME(a##7)
static long (*const table[64])(long) = {NAMES(0) NAMES(1) NAMES(2) NAMES(3) NAMES(4) NAMES(5) NAMES(6) NAMES(7)};

/* fresh_spin(k, n): function k (0..63) spins n times */
long fresh_spin(int which, long n)
{
    return table[which & 63](n);
}
