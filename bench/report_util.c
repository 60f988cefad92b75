/*
 * report_util.c: reading a whole report file for the bench report writers (report_util.h).
 */
#include "report_util.h"

#include <stdio.h>
#include <stdlib.h>

char *bench_read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, len = 0, got;
    char *buf = malloc(cap);
    while (buf != NULL && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) {
            char *grown = realloc(buf, cap * 2);
            if (grown == NULL)
                free(buf);
            buf = grown;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf != NULL)
        buf[len] = '\0';
    return buf;
}
