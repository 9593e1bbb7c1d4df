/*
 * replay: runs files (or every file of directories) through a fuzz
 * harness's entry point, for the normal test run.  Linked with each
 * harness (build/replay-NAME for tests/fuzz/fuzz_NAME.c), it replays the
 * corpus kept in tests/fuzz/corpus/NAME, plain and under ASan+UBSan, so
 * any input that once crashed a parser stays a test.
 *
 *   replay-NAME PATH...   prints how many inputs ran
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    uint8_t *data = NULL;
    size_t size = 0, cap = 0;
    for (;;) {
        if (size == cap) {
            cap = cap ? 2 * cap : 65536;
            uint8_t *grown = realloc(data, cap);
            if (!grown) {
                free(data);
                fclose(f);
                return -1;
            }
            data = grown;
        }
        size_t n = fread(data + size, 1, cap - size, f);
        if (n == 0)
            break;
        size += n;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

int main(int argc, char **argv)
{
    long ran = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) < 0) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[i]) < 0)
                return 1;
            ran++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d)
            return 1;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            if (run_file(path) < 0) {
                closedir(d);
                return 1;
            }
            ran++;
        }
        closedir(d);
    }
    const char *name = strrchr(argv[0], '/');
    printf("%s: %ld inputs, no crash\n", name ? name + 1 : argv[0], ran);
    return 0;
}
