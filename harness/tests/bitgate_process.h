/*
** bitgate_process.h: test support for the tests that meet bitgate as a user
** does, as a process: run the binary with arguments, capture its exit status
** and both streams, and keep a scratch directory per test.
*/
#ifndef BITGATE_PROCESS_H
#define BITGATE_PROCESS_H

#include <stddef.h>

typedef struct outcome {
  int status; /* the exit code, or 128 + signal */
  char out[262144], err[16384];
} outcome;

/*
** Runs BITGATE_BINARY with args (NULL-terminated) in directory dir (NULL:
** here).  The result lives in one static outcome, reused by the next call.
*/
outcome *run_bitgate(const char *dir, const char *const *args);

#define RUN(dir, ...) run_bitgate(dir, (const char *const[]){__VA_ARGS__, NULL})

int line_count(const char *s);

/* The scratch directory of the running test: made by make_tmp, removed by remove_tmp. */
extern char tmp[256];
void make_tmp(void);
void remove_tmp(void);

#endif
