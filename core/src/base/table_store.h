/*
 * table_store.h: how a CSV table is held, private to base/table*.c (callers use base/base.h):
 * its cells (text in one arena, each with the line and column where it starts), the state of
 * the parse, and the source it reads.  table.c parses into it; table_cells.c reads it.
 */
#ifndef EC_TABLE_STORE_H
#define EC_TABLE_STORE_H

#include "base/base.h"

#include <csv.h>
#include <stdint.h>
#include <stdio.h>

typedef struct cell {
    uint32_t off;  /* offset of the NUL-terminated text in the arena */
    uint32_t line; /* 1-based line where the cell starts (its opening quote if quoted) */
    uint32_t col;  /* 1-based column, in characters, after a BOM */
} cell;

/* The state shared by the byte scanner and libcsv's callbacks, which return void: the
 * first error is kept in status and every later callback does nothing.  It lives as long as
 * the table, since a streamed table is scanned a block at a time. */
typedef struct parse_state {
    int status;
    int at_start;             /* nothing scanned yet (a BOM may come) */
    int want_start;           /* the next non-blank byte starts a field */
    int row_start;            /* ... and a row, so line ends are blank too */
    uint32_t line, col;       /* position of the next byte to scan */
    uint32_t start_line, start_col; /* where the current field starts */
    uint32_t trig_line, trig_col;   /* position of the byte that fired the callbacks */
    int next_byte;            /* the byte after it, -1 at the end of the input */
    size_t field_bytes;       /* bytes fed since the last field ended */
    size_t extra_fields;      /* fields of the current row beyond the header's count */
    size_t row_first;         /* index in t->cells of the current row's first cell */
} parse_state;

struct eci_table {
    ec_ctx *ctx;          /* the allocator the table was created with */
    char *name;           /* the file's name in messages */
    char *arena;          /* every kept cell's text, NUL-terminated */
    size_t arena_size, arena_used;
    cell *cells;          /* header row first, then data rows, row-major */
    size_t n_cells, cap_cells;
    const char **hdr;     /* header names, pointers into the arena */
    size_t cols, rows;    /* rows counts the data rows held */
    int whole;            /* keep every row (else a window of rows, eci_table_next) */
    /* the source: a file or a buffer */
    FILE *fp;
    const unsigned char *mem;
    size_t mem_len, mem_pos;
    uint64_t total_bytes, read_bytes;
    size_t block;         /* bytes read at once */
    unsigned char *buf;   /* carried bytes, then one block */
    size_t buf_cap, carry;
    int source_done;      /* the source has no more bytes */
    int done;             /* ... and libcsv has been finished */
    struct csv_parser p;
    int p_live;
    parse_state st;
};

static inline const char *cell_text(const eci_table *t, size_t i)
{
    return t->arena + t->cells[i].off;
}

#endif /* EC_TABLE_STORE_H */
