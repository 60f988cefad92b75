/*
 * report_util.h: what the report writers of bench/ share (bench_llm_runs, bench_mpt_holdout):
 * reading a whole report file, whose hand-written part above the generated marker they keep.
 */
#ifndef EC_BENCH_REPORT_UTIL_H
#define EC_BENCH_REPORT_UTIL_H

/* The whole file as a NUL-terminated string (malloc'd), NULL when it cannot be read. */
char *bench_read_all(const char *path);

#endif
