/*
 * spool: see spool.h.
 */
#include "cli/spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/hash.h"
#include "common/mem.h"

/* A directory of ours (made 0700 if missing): 0, or -1 with a reason. */
static int own_dir(const char *path, char *why, size_t size)
{
    if (mkdir(path, 0700) < 0 && errno != EEXIST) {
        snprintf(why, size, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(why, size, "%s is not a directory", path);
        return -1;
    }
    if (st.st_uid != geteuid() || (st.st_mode & 022)) {
        snprintf(why, size, "%s belongs to another user or others may write to it", path);
        return -1;
    }
    return 0;
}

static int write_file(const char *dir, const char *name, const void *data, size_t len)
{
    char tmp[PATH_MAX + 64], path[PATH_MAX + 64];
    if (snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name) >= (int)sizeof tmp ||
        snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    const char *p = data;
    size_t left = len;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close(fd);
            unlink(tmp);
            return -1;
        }
        p += w;
        left -= (size_t)w;
    }
    if (close(fd) < 0 || rename(tmp, path) < 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static int read_file(const char *path, struct buf *out)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char chunk[65536];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            close(fd);
            return n < 0 || out->failed ? -1 : 0;
        }
        buf_put(out, chunk, (size_t)n);
    }
}

static int add_run(struct spool *s, const char *dir, int fd)
{
    char *copy = mem_strdup(dir);
    struct spool_run *runs = mem_grow(s->runs, &s->run_cap, s->run_count + 1, sizeof *runs);
    if (!copy || !runs) {
        mem_free(copy);
        return -1;
    }
    s->runs = runs;
    struct spool_run r = {copy, 0, fd};
    s->runs[s->run_count++] = r;
    return 0;
}

/* A run taken over that is empty: gone, its lock with it. */
static void drop_run(struct spool *s, size_t run)
{
    char lockpath[PATH_MAX + 16];
    snprintf(lockpath, sizeof lockpath, "%s/lock", s->runs[run].path);
    unlink(lockpath);
    rmdir(s->runs[run].path);
    if (s->runs[run].fd >= 0)
        close(s->runs[run].fd);
    s->runs[run].fd = -1;
}

static int insert(struct spool *s, const struct spool_entry *e)
{
    struct spool_entry *grown = mem_grow(s->entries, &s->cap, s->count + 1, sizeof *grown);
    if (!grown)
        return -1;
    s->entries = grown;
    /* by window, then by id: adopted runs are older */
    size_t at = s->count;
    while (at > 0 && (s->entries[at - 1].window_ns > e->window_ns ||
                      (s->entries[at - 1].window_ns == e->window_ns && s->entries[at - 1].id > e->id)))
        at--;
    memmove(&s->entries[at + 1], &s->entries[at], (s->count - at) * sizeof *s->entries);
    s->entries[at] = *e;
    s->count++;
    s->bytes += e->size;
    s->runs[e->run].left++;
    return 0;
}

/* The runs whose uploader is gone: their files join ours. */
static void adopt(struct spool *s, const char *dest)
{
    DIR *d = opendir(dest);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "run-", 4) != 0)
            continue;
        char run[PATH_MAX + 300], lockpath[PATH_MAX + 320];
        snprintf(run, sizeof run, "%s/%s", dest, de->d_name);
        if (!strcmp(run, s->dir))
            continue;
        snprintf(lockpath, sizeof lockpath, "%s/lock", run);
        int fd = open(lockpath, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            continue;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0 || add_run(s, run, fd) < 0) {
            close(fd);
            continue; /* alive, or no memory: left for later */
        }
        /* the lock stays ours until the run is emptied (drop_run) */
        size_t r = s->run_count - 1;
        DIR *files = opendir(run);
        struct dirent *fe;
        while (files && (fe = readdir(files)) != NULL) {
            unsigned long long seq, window;
            char tail[8];
            if (sscanf(fe->d_name, "%12llu-%llu.%7s", &seq, &window, tail) != 3 ||
                strcmp(tail, "push") != 0)
                continue;
            char path[PATH_MAX + 600];
            snprintf(path, sizeof path, "%s/%s", run, fe->d_name);
            struct stat st;
            if (stat(path, &st) < 0)
                continue;
            struct spool_entry e = {++s->next_id, window, (size_t)st.st_size, mem_strdup(path),
                                    NULL, r, 0, 0};
            if (!e.path || insert(s, &e) < 0) {
                mem_free(e.path);
                continue;
            }
            s->adopted++;
        }
        if (files)
            closedir(files);
        if (!s->runs[r].left)
            drop_run(s, r);
    }
    closedir(d);
}

int spool_open(struct spool *s, const char *root, const char *dest_key, uint64_t max_bytes)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
    s->lock_fd = -1;
    s->max_bytes = max_bytes;
    if (add_run(s, "", -1) < 0)
        return -1;
    char base[PATH_MAX], dest[PATH_MAX + 32], why[PATH_MAX + 100] = "";
    if (root && root[0]) {
        snprintf(base, sizeof base, "%s", root);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(base, sizeof base, "%s/corscope-push-%ld", tmp && tmp[0] ? tmp : "/tmp",
                 (long)geteuid());
    }
    snprintf(dest, sizeof dest, "%s/%016llx", base,
             (unsigned long long)hash_bytes(dest_key, strlen(dest_key), 0xd357));
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int n = snprintf(s->dir, sizeof s->dir, "%s/run-%ld-%lld%09ld", dest, (long)getpid(),
                     (long long)ts.tv_sec, ts.tv_nsec);
    if (n >= (int)sizeof s->dir)
        snprintf(why, sizeof why, "the spool's path is too long");
    if (why[0] || own_dir(base, why, sizeof why) < 0 || own_dir(dest, why, sizeof why) < 0 ||
        own_dir(s->dir, why, sizeof why) < 0) {
        snprintf(s->note, sizeof s->note, "push: %s; waiting pushes are kept in memory", why);
        s->dir[0] = '\0';
        return 0;
    }
    char lockpath[PATH_MAX + 16];
    snprintf(lockpath, sizeof lockpath, "%s/lock", s->dir);
    s->lock_fd = open(lockpath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (s->lock_fd < 0 || flock(s->lock_fd, LOCK_EX | LOCK_NB) < 0) {
        snprintf(s->note, sizeof s->note, "push: cannot lock %s; waiting pushes are kept in memory",
                 lockpath);
        if (s->lock_fd >= 0)
            close(s->lock_fd);
        s->lock_fd = -1;
        rmdir(s->dir);
        s->dir[0] = '\0';
        return 0;
    }
    char *ours = mem_strdup(s->dir);
    if (ours) {
        mem_free(s->runs[0].path);
        s->runs[0].path = ours;
    }
    adopt(s, dest);
    return 0;
}

/* Removes an entry's body (the lock is held). */
static void forget(struct spool *s, size_t at)
{
    struct spool_entry *e = &s->entries[at];
    if (e->path) {
        unlink(e->path);
        mem_free(e->path);
    }
    mem_free(e->mem);
    s->bytes -= e->size;
    if (e->doomed)
        s->doomed_bytes -= e->size;
    size_t run = e->run;
    memmove(&s->entries[at], &s->entries[at + 1], (s->count - at - 1) * sizeof *s->entries);
    s->count--;
    if (--s->runs[run].left == 0 && run > 0)
        drop_run(s, run);
}

int spool_add(struct spool *s, uint64_t window_ns, const void *body, size_t len)
{
    pthread_mutex_lock(&s->lock);
    int rc = -1;
    if (len > s->max_bytes) {
        s->dropped++;
        s->dropped_bytes += len;
        goto out;
    }
    /* the oldest make room; one in flight goes if its send fails */
    for (size_t i = 0; s->bytes - s->doomed_bytes + len > s->max_bytes && i < s->count;) {
        struct spool_entry *e = &s->entries[i];
        if (e->in_flight) {
            if (!e->doomed) {
                e->doomed = 1;
                s->doomed_bytes += e->size;
            }
            i++;
            continue;
        }
        s->dropped++;
        s->dropped_bytes += s->entries[i].size;
        forget(s, i);
    }
    struct spool_entry e = {++s->next_id, window_ns, len, NULL, NULL, 0, 0, 0};
    char name[64];
    snprintf(name, sizeof name, "%012llu-%llu.push", (unsigned long long)e.id,
             (unsigned long long)window_ns);
    if (s->dir[0] && write_file(s->dir, name, body, len) == 0) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/%s", s->dir, name);
        e.path = mem_strdup(path);
        if (!e.path)
            unlink(path);
    } else {
        if (s->dir[0] && !s->note[0])
            snprintf(s->note, sizeof s->note,
                     "push: cannot write to %s (%s); waiting pushes are kept in memory", s->dir,
                     strerror(errno));
        e.mem = mem_alloc(len ? len : 1);
        if (e.mem)
            memcpy(e.mem, body, len);
    }
    if ((!e.path && !e.mem) || insert(s, &e) < 0) {
        if (e.path)
            unlink(e.path);
        mem_free(e.path);
        mem_free(e.mem);
        s->dropped++;
        s->dropped_bytes += len;
        goto out;
    }
    rc = 0;
out:
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static long find(const struct spool *s, uint64_t id)
{
    for (size_t i = 0; i < s->count; i++)
        if (s->entries[i].id == id)
            return (long)i;
    return -1;
}

uint64_t spool_take(struct spool *s, struct buf *out)
{
    pthread_mutex_lock(&s->lock);
    uint64_t id = 0;
    while (s->count && !id) {
        struct spool_entry *e = &s->entries[0];
        buf_reset(out);
        if (e->mem)
            buf_put(out, e->mem, e->size);
        else if (read_file(e->path, out) < 0) {
            /* gone or unreadable (someone cleaned /tmp): counted, skipped */
            s->dropped++;
            s->dropped_bytes += e->size;
            forget(s, 0);
            continue;
        }
        if (out->failed)
            break;
        e->in_flight = 1;
        id = e->id;
    }
    pthread_mutex_unlock(&s->lock);
    return id;
}

void spool_done(struct spool *s, uint64_t id)
{
    pthread_mutex_lock(&s->lock);
    long at = find(s, id);
    if (at >= 0)
        forget(s, (size_t)at);
    pthread_mutex_unlock(&s->lock);
}

void spool_release(struct spool *s, uint64_t id)
{
    pthread_mutex_lock(&s->lock);
    long at = find(s, id);
    if (at >= 0 && s->entries[at].doomed) {
        s->dropped++;
        s->dropped_bytes += s->entries[at].size;
        forget(s, (size_t)at);
    } else if (at >= 0) {
        s->entries[at].in_flight = 0;
    }
    pthread_mutex_unlock(&s->lock);
}

size_t spool_waiting(struct spool *s)
{
    pthread_mutex_lock(&s->lock);
    size_t n = s->count;
    pthread_mutex_unlock(&s->lock);
    return n;
}

void spool_close(struct spool *s)
{
    for (size_t i = 0; i < s->count; i++) {
        mem_free(s->entries[i].path);
        mem_free(s->entries[i].mem);
    }
    int ours_empty = s->dir[0] && s->run_count && !s->runs[0].left;
    if (ours_empty) {
        char lockpath[PATH_MAX + 16];
        snprintf(lockpath, sizeof lockpath, "%s/lock", s->dir);
        unlink(lockpath);
        rmdir(s->dir);
    }
    if (s->lock_fd >= 0)
        close(s->lock_fd);
    for (size_t i = 0; i < s->run_count; i++) {
        if (i > 0 && s->runs[i].fd >= 0)
            close(s->runs[i].fd);
        mem_free(s->runs[i].path);
    }
    mem_free(s->runs);
    mem_free(s->entries);
    pthread_mutex_destroy(&s->lock);
    memset(s, 0, sizeof *s);
    s->lock_fd = -1;
}
