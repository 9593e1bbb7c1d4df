/*
 * A native library with no .eh_frame (built -fno-asynchronous-unwind-tables
 * -Wl,--no-eh-frame-hdr, with -g: its unwind data is in .debug_frame only,
 * which no unwinder in a running process reads).  It keeps frame pointers,
 * so walks through it go by them; `check` says the library has no
 * .eh_frame_hdr.
 */
long gap_spin_debug(long n)
{
    volatile long x = 0;
    for (long i = 0; i < n; i++)
        x += i;
    return x;
}
