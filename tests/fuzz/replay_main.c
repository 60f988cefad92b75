/*
 * replay_main.c: a plain main() for a libFuzzer harness, so that ctest replays its corpus
 * (label fuzz-regress) without clang's fuzzer runtime.  Arguments are files or folders;
 * a folder's files are replayed in sorted order, skipping dotfiles.  A crash, a sanitizer
 * report or a leak is the failure; otherwise it prints "replayed N inputs" and exits 0.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf != NULL) {
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int bad = buf == NULL || ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        free(buf);
        return -1;
    }
    /* An exact-size copy, so that ASan catches a read one past the end. */
    uint8_t *exact = malloc(n ? n : 1);
    if (exact == NULL) {
        free(buf);
        return -1;
    }
    if (n)
        memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int replay_dir(const char *dir, long *count)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        fprintf(stderr, "replay: cannot open folder %s\n", dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 64;
            char **nn = realloc(names, ncap * sizeof *nn);
            if (nn == NULL) {
                rc = -1;
                break;
            }
            names = nn;
            cap = ncap;
        }
        size_t dl = strlen(dir), fl = strlen(e->d_name);
        names[n] = malloc(dl + fl + 2);
        if (names[n] == NULL) {
            rc = -1;
            break;
        }
        memcpy(names[n], dir, dl);
        names[n][dl] = '/';
        memcpy(names[n] + dl + 1, e->d_name, fl + 1);
        n++;
    }
    closedir(d);
    if (n > 0)
        qsort(names, n, sizeof *names, cmp_names);
    for (size_t i = 0; i < n; i++) {
        struct stat sb;
        if (rc == 0 && stat(names[i], &sb) == 0 && S_ISREG(sb.st_mode)) {
            if (replay_file(names[i]) != 0)
                rc = -1;
            else
                (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    long count = 0;
    int rc = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s FOLDER|FILE...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc && rc == 0; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) != 0) {
            fprintf(stderr, "replay: %s does not exist\n", argv[i]);
            rc = -1;
        } else if (S_ISDIR(sb.st_mode)) {
            rc = replay_dir(argv[i], &count);
        } else if (replay_file(argv[i]) == 0) {
            count++;
        } else {
            rc = -1;
        }
    }
    printf("replayed %ld inputs\n", count);
    if (rc == 0 && count == 0) {
        fprintf(stderr, "replay: no inputs\n");
        return 1;
    }
    return rc == 0 ? 0 : 1;
}
