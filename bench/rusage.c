/*
 * rusage: runs a command and writes its wall time and the CPU time of it
 * and every descendant it waited for, in microseconds, to a file:
 *
 *   rusage FILE COMMAND [ARGS...]   ->  FILE: "WALL_US USER_US SYS_US\n"
 *
 * /usr/bin/time prints CPU time in hundredths of a second, too coarse for
 * what one short process pays for the agent (a few milliseconds); the
 * kernel's rusage from wait4 has microseconds.  The command's standard
 * streams are its own; rusage exits with its status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long us_of(struct timeval tv)
{
    return (long long)tv.tv_sec * 1000000 + tv.tv_usec;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: rusage FILE COMMAND [ARGS...]\n");
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) {
        perror("rusage: fork");
        return 2;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        fprintf(stderr, "rusage: cannot run %s\n", argv[2]);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) {
        perror("rusage: wait4");
        return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long long wall = (long long)(t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000;
    FILE *f = fopen(argv[1], "w");
    if (!f || fprintf(f, "%lld %lld %lld\n", wall, us_of(ru.ru_utime), us_of(ru.ru_stime)) < 0 ||
        fclose(f) != 0) {
        fprintf(stderr, "rusage: cannot write %s\n", argv[1]);
        return 2;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
