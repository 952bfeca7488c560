/*
** numerics_check.h: the proofs behind the frozen numerics (issue "Foundation",
** DESIGN.md "The frozen numerics").  Each check compares numerics.h against
** an independent reference (MPFR, or the GPU's own conversions) and prints one
** line per check and a last line "numerics: N checked, M incorrect".
*/
#ifndef NUMERICS_CHECK_H
#define NUMERICS_CHECK_H

#include <stdio.h>

typedef struct check_tally {
  long long checked, incorrect;
} check_tally;

/* Reports one wrong result (at most a few lines per check are printed). */
void check_report(const char *check, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One named check: `units` independent work items, run in parallel. */
typedef struct check_def {
  const char *name;
  long long units;
  void (*unit)(long long unit, check_tally *t);
} check_def;

/* Runs the checks on `threads` workers, printing a line per check; adds to *total. */
void check_run_all(const check_def *defs, int n, int threads, FILE *out, check_tally *total);

/* The fast stratified check (CI): transcendentals, formats, quantizers, order. */
int numerics_check_sample(int threads, FILE *out, check_tally *total);

/* The codec, quantizer and order checks (numerics_check_codecs.c). */
extern const check_def codec_checks[];
extern const int codec_check_count;

/* All 2^32 inputs of one function ("exp", "sincos" or "pow160000") in
** [from, to), against MPFR. */
int numerics_check_exhaustive(const char *func, unsigned long long from, unsigned long long to,
                              int threads, FILE *out, check_tally *total);

/* All 2^32 inputs of every device sweep function (or only the one named
** `only`, NULL for all) against the host (needs a GPU). */
int numerics_check_device(const char *only, int threads, FILE *out, check_tally *total, char *err,
                          size_t err_len);

/* 1 if name is a device sweep function ("exp", "max_neg", ...). */
int numerics_device_func_known(const char *name);

/* Shared sample helpers. */
unsigned long long check_hash(unsigned long long a, unsigned long long b, unsigned long long c);
/* A float in stratum s (sign = s >> 8, biased exponent = s & 255); i = 0..3 pick
** the stratum's edges (mantissa 0, 1, max, half), other i a hashed mantissa. */
float check_stratum_sample(unsigned salt, int stratum, long long i);
/* Same bits, or both NaN. */
int check_same_f32(float a, float b);

#endif
