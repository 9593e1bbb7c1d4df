/*
 * hijack: see hijack.h.
 */
#include "agent/signal/hijack.h"

#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* OnHijackTripThread's first instructions: push rax, rbp, rbx, r15, r14,
 * r13, r12, rcx, rdx, rax; mov rdi, rsp (the HijackArgs it hands to its
 * worker). */
static const uint8_t stub_head[] = {0x50, 0x55, 0x53, 0x41, 0x57, 0x41, 0x56, 0x41, 0x55,
                                    0x41, 0x54, 0x51, 0x52, 0x50, 0x48, 0x89, 0xE7};
/* How far past its head the stub's pop rbp; ret may be. */
#define STUB_MAX 256
/* How far into the Thread object the pair is looked for. */
#define THREAD_SCAN 4096

static _Atomic uintptr_t stub_lo, stub_hi;
static _Atomic uintptr_t pair_offset; /* + 1: where the pair was last found */
static _Atomic int searched;          /* the search was made or is under way */
static int seen_runtime;              /* it went through libcoreclr.so (found or not) */

void hijack_set_range(uintptr_t lo, uintptr_t hi)
{
    atomic_store(&stub_lo, lo);
    atomic_store(&stub_hi, hi);
}

void hijack_range(uintptr_t *lo, uintptr_t *hi)
{
    *lo = atomic_load(&stub_lo);
    *hi = atomic_load(&stub_hi);
}

/* ---- the loop's side ------------------------------------------------------ */

/* The stub's end: the pop rbp; ret that closes it, within STUB_MAX. */
static void found_stub(const uint8_t *found, const uint8_t *found_end)
{
    const uint8_t *limit = found + STUB_MAX < found_end ? found + STUB_MAX : found_end;
    for (const uint8_t *p = found + sizeof stub_head; p + 1 < limit; p++) {
        if (p[0] == 0x5D && p[1] == 0xC3) {
            hijack_set_range((uintptr_t)found, (uintptr_t)(p + 2));
            break;
        }
    }
}

/* The end of the executable segment that holds [p, p + n), or NULL. */
static const uint8_t *in_text(const struct dl_phdr_info *info, const uint8_t *p, size_t n)
{
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || !(ph->p_flags & PF_R))
            continue;
        const uint8_t *at = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        if (p >= at && n <= ph->p_filesz && (size_t)(p - at) <= ph->p_filesz - n)
            return at + ph->p_filesz;
    }
    return NULL;
}

/* The stub is a function of its own, with unwind rules: its head is looked
 * for at the function starts of .eh_frame_hdr's search table (17,000 of
 * them in .NET 10's libcoreclr.so) rather than in every byte of the 4.9 MB
 * of code.  The executable segment is found once and each start checked
 * against it, first byte first (0.8 ms of each process when each start
 * looked through the program headers).  -1 when the table is not in the
 * usual encoding (then every byte is searched); else how many starts hold
 * the head. */
static int search_starts(const struct dl_phdr_info *info, const uint8_t **found,
                         const uint8_t **found_end)
{
    const uint8_t *text = NULL, *text_end = NULL;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum && !text; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && (ph->p_flags & PF_R) &&
            ph->p_filesz >= sizeof stub_head) {
            text = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
            text_end = text + ph->p_filesz;
        }
    }
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_GNU_EH_FRAME)
            continue;
        const uint8_t *hdr = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        /* version 1; the count a udata4, the table datarel sdata4 pairs */
        if (ph->p_memsz < 12 || hdr[0] != 1 || hdr[2] != 0x03 || hdr[3] != 0x3b)
            return -1;
        uint32_t n;
        memcpy(&n, hdr + 8, 4);
        if ((uint64_t)n * 8 > ph->p_memsz - 12)
            return -1;
        int count = 0;
        /* a start in the first executable segment is checked against it;
         * any other goes through in_text, segment by segment */
        for (uint32_t k = 0; k < n; k++) {
            int32_t rel;
            memcpy(&rel, hdr + 12 + (size_t)k * 8, 4);
            const uint8_t *f = hdr + rel;
            const uint8_t *end;
            if (text && f >= text && f <= text_end - sizeof stub_head)
                end = text_end;
            else if (!(end = in_text(info, f, sizeof stub_head)))
                continue;
            if (f[0] == stub_head[0] && !memcmp(f, stub_head, sizeof stub_head)) {
                *found = f;
                *found_end = end;
                count++;
            }
        }
        return count;
    }
    return -1;
}

static int on_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    const char *name = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    if (!name || strcmp(name + 1, "libcoreclr.so") != 0)
        return 0;
    seen_runtime = 1;
    const uint8_t *found = NULL, *found_end = NULL;
    int count = search_starts(info, &found, &found_end);
    if (count == 1) {
        found_stub(found, found_end);
        return 1;
    }
    if (count >= 0)
        return 1; /* not this runtime's stub, or not only it: leave hijacks alone */
    count = 0;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || !(ph->p_flags & PF_R))
            continue;
        const uint8_t *at = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        const uint8_t *end = at + ph->p_filesz;
        while (at < end) {
            const uint8_t *hit = memmem(at, (size_t)(end - at), stub_head, sizeof stub_head);
            if (!hit)
                break;
            found = hit;
            found_end = end;
            count++;
            at = hit + 1;
        }
    }
    if (count == 1)
        found_stub(found, found_end);
    return 1;
}

void hijack_refresh(void)
{
    if (atomic_load_explicit(&searched, memory_order_relaxed) || atomic_exchange(&searched, 1))
        return;
    seen_runtime = 0;
    dl_iterate_phdr(on_object, NULL);
    if (!seen_runtime)
        atomic_store(&searched, 0); /* not loaded yet: the next call looks again */
}

/* ---- the handler's side --------------------------------------------------- */

int hijack_is_stub(uintptr_t pc)
{
    uintptr_t lo = atomic_load_explicit(&stub_lo, memory_order_relaxed);
    return lo && pc == lo;
}

int hijack_in_stub(uintptr_t at)
{
    uintptr_t lo = atomic_load_explicit(&stub_lo, memory_order_relaxed);
    return lo && at >= lo && at < atomic_load_explicit(&stub_hi, memory_order_relaxed);
}

/* Words of the Thread object, through the kernel: the sampled thread's
 * Thread may have been freed (the runtime reuses a tid before the agent
 * learns of the new Thread), and unmapped memory must answer EFAULT, not
 * SIGSEGV.  Returns the words read. */
static size_t read_words(uintptr_t at, uintptr_t *out, size_t n)
{
    int saved = errno;
    struct iovec local = {out, n * sizeof *out}, remote = {(void *)at, n * sizeof *out};
    long got = syscall(SYS_process_vm_readv, (long)syscall(SYS_getpid), &local, 1L, &remote, 1L, 0L);
    errno = saved;
    return got > 0 ? (size_t)got / sizeof *out : 0;
}

#define CHUNK 32

uintptr_t hijack_real(uintptr_t thread, uintptr_t slot, int (*is_code)(uintptr_t))
{
    if (!thread || (thread & 7))
        return 0;
    uintptr_t stub = atomic_load_explicit(&stub_lo, memory_order_relaxed);
    uintptr_t hint = atomic_load_explicit(&pair_offset, memory_order_relaxed);
    uintptr_t w[CHUNK + 1];
    if (hint && read_words(thread + hint - 1, w, 2) == 2 && w[1] == slot && w[0] != stub &&
        is_code(w[0]))
        return w[0];
    /* chunks overlapping by a word, so that no pair is split */
    for (uintptr_t off = 0; off < THREAD_SCAN; off += CHUNK * sizeof w[0]) {
        size_t n = read_words(thread + off, w, CHUNK + 1);
        for (size_t i = 0; i + 1 < n; i++) {
            if (w[i + 1] == slot && w[i] != stub && is_code(w[i])) {
                atomic_store_explicit(&pair_offset, off + i * sizeof w[0] + 1, memory_order_relaxed);
                return w[i];
            }
        }
        if (n < CHUNK + 1)
            break; /* the end of what is mapped */
    }
    return 0;
}
