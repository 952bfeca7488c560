/*
** test_fill_threads.c: the thread count changes no byte of a case's tensors
** (cases/fill.h; issue 8, "Oracle speed").
**
** A sample of the gate suite, the first cases of every family, plus cases
** whose fills are big enough to split over 16 workers, is materialized step
** by step at 1, 2 and 16 threads (1 and 16 through oracle_threads_set, 2
** through BITGATE_ORACLE_THREADS, so both settings are exercised).  Every
** input and output tensor must be equal byte for byte to the 1-thread one;
** a failure names the case, step, tensor and first differing byte.
*/
#include "cases/csa128_cases.h"
#include "cases/csa4_cases.h"
#include "cases/fill.h"
#include "cases/index_share_cases.h"
#include "spec_set.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define SAMPLE_PER_FAMILY 4
#define FAMILY_MAX 32
#define TENSORS_MAX 32 /* above every operator's inputs and outputs */

_Static_assert(IS_CASE_MAX_INPUTS <= TENSORS_MAX && IS_OUTPUT_COUNT <= TENSORS_MAX, "IndexShare arrays fit");
_Static_assert(CSA_INPUT_COUNT <= TENSORS_MAX && CSA_OUTPUT_MAX <= TENSORS_MAX, "CSA arrays fit");

/* One materialized step of any operator. */
typedef struct step_tensors {
  tensor in[TENSORS_MAX], out[TENSORS_MAX];
  int n_in, n_out, steps;
} step_tensors;

/* Parses spec and materializes `step` into s (s->steps: the case's steps).  0, or -1 with err set. */
typedef int (*materialize_fn)(const char *spec, int step, step_tensors *s, char *err, size_t len);
typedef void (*release_fn)(step_tensors *s);

static int is_materialize(const char *spec, int step, step_tensors *s, char *err, size_t len) {
  index_share_attrs attrs;
  is_case c;
  if (cases_is_parse(spec, &c, err, len)) return -1;
  s->steps = c.steps;
  return cases_is_materialize(&c, step, s->in, &s->n_in, s->out, &s->n_out, &attrs, err, len);
}
static void is_release(step_tensors *s) { cases_is_release(s->in, s->out); }

static int csa128_materialize(const char *spec, int step, step_tensors *s, char *err, size_t len) {
  csa_attrs attrs;
  csa_case c;
  if (cases_csa_parse(spec, &c, err, len)) return -1;
  s->steps = cases_csa_steps(&c);
  return cases_csa_materialize(&c, step, s->in, &s->n_in, s->out, &s->n_out, &attrs, err, len);
}
static void csa128_release(step_tensors *s) { cases_csa_release(s->in, s->out); }

static int csa4_materialize(const char *spec, int step, step_tensors *s, char *err, size_t len) {
  csa_attrs attrs;
  csa4_case c;
  if (cases_csa4_parse(spec, &c, err, len)) return -1;
  s->steps = cases_csa4_steps(&c);
  return cases_csa4_materialize(&c, step, s->in, &s->n_in, s->out, &s->n_out, &attrs, err, len);
}
static void csa4_release(step_tensors *s) { cases_csa4_release(s->in, s->out); }

static const struct op_row {
  const char *prefix;
  materialize_fn materialize;
  release_fn release;
} ops[] = {
    {"family=is.", is_materialize, is_release},
    {"family=csa128.", csa128_materialize, csa128_release},
    {"family=csa4.", csa4_materialize, csa4_release},
};

static const struct op_row *op_of(const char *spec) {
  size_t i;
  for (i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (!strncmp(spec, ops[i].prefix, strlen(ops[i].prefix))) return &ops[i];
  cr_assert_fail("no operator for spec: %s", spec);
  return NULL;
}

/* The thread settings compared with the first: {oracle_threads_set value, BITGATE_ORACLE_THREADS or NULL}. */
static const struct thread_row {
  int set;
  const char *env, *name;
} thread_rows[] = {{1, NULL, "1 thread"}, {0, "2", "BITGATE_ORACLE_THREADS=2"}, {16, NULL, "16 threads"}};

static void threads_apply(const struct thread_row *t) {
  if (t->env) setenv("BITGATE_ORACLE_THREADS", t->env, 1);
  else unsetenv("BITGATE_ORACLE_THREADS");
  oracle_threads_set(t->set);
}

static void materialize_at(const struct op_row *op, const char *spec, int step, const struct thread_row *t,
                           step_tensors *s) {
  char err[512];
  memset(s, 0, sizeof *s);
  threads_apply(t);
  cr_assert_eq(op->materialize(spec, step, s, err, sizeof err), 0, "step %d of %s: %s", step, spec, err);
  oracle_threads_set(0);
  unsetenv("BITGATE_ORACLE_THREADS");
}

/* Tensor a (the 1-thread one) against b byte for byte; returns a's element count. */
static long long expect_same(const char *what, int index, const tensor *a, const tensor *b, const char *spec,
                             int step, const char *threads) {
  size_t n = a->data ? tensor_bytes(a) : 0, i;
  cr_assert_eq(a->dt, b->dt, "%s %d", what, index);
  cr_assert_eq(!a->data, !b->data, "%s %d: allocated at one thread count only", what, index);
  cr_assert_eq(n, b->data ? tensor_bytes(b) : 0, "%s %d: sizes differ", what, index);
  if (n && memcmp(a->data, b->data, n)) {
    for (i = 0; ((const unsigned char *)a->data)[i] == ((const unsigned char *)b->data)[i]; i++) continue;
    cr_assert_fail("step %d, %s %d: byte %zu is 0x%02x at 1 thread, 0x%02x at %s:\n  %s", step, what, index, i,
                   ((const unsigned char *)a->data)[i], ((const unsigned char *)b->data)[i], threads, spec);
  }
  return a->data ? tensor_numel(a) : 0;
}

/* Every step of spec at each thread setting against the first; returns the largest tensor's element count. */
static long long expect_thread_independent(const char *spec) {
  const struct op_row *op = op_of(spec);
  static step_tensors one, many; /* big: off the stack */
  long long largest = 0, n;
  int step = 0, k, i;
  do {
    materialize_at(op, spec, step, &thread_rows[0], &one);
    for (k = 1; k < (int)(sizeof thread_rows / sizeof thread_rows[0]); k++) {
      materialize_at(op, spec, step, &thread_rows[k], &many);
      cr_assert_eq(many.n_in, one.n_in);
      cr_assert_eq(many.n_out, one.n_out);
      for (i = 0; i < TENSORS_MAX; i++) {
        n = expect_same("input", i, &one.in[i], &many.in[i], spec, step, thread_rows[k].name);
        largest = n > largest ? n : largest;
        expect_same("output", i, &one.out[i], &many.out[i], spec, step, thread_rows[k].name);
      }
      op->release(&many);
    }
    op->release(&one);
  } while (++step < one.steps);
  return largest;
}

/* The spec lines of corpus/gate.suite ('#' comments and blanks skipped); skips without BITGATE_SOURCE_DIR. */
static spec_set read_gate(void) {
  const char *dir = getenv("BITGATE_SOURCE_DIR");
  spec_set s = {0};
  char path[4096], *line = NULL;
  size_t cap = 0;
  ssize_t len;
  FILE *f;
  if (!dir) cr_skip_test("BITGATE_SOURCE_DIR is not set");
  snprintf(path, sizeof path, "%s/corpus/gate.suite", dir);
  cr_assert((f = fopen(path, "r")) != NULL, "cannot read %s", path);
  while ((len = getline(&line, &cap, f)) >= 0) {
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
    if (len > 0 && line[0] != '#') spec_set_push(line, &s);
  }
  free(line);
  fclose(f);
  return s;
}

Test(fill_threads, gate_sample_is_byte_identical_at_1_2_and_16_threads, .timeout = 600) {
  char families[FAMILY_MAX][40];
  int taken[FAMILY_MAX] = {0}, n_families = 0, i, f, ran = 0;
  spec_set gate = read_gate();
  for (i = 0; i < gate.n; i++) {
    const char *v = gate.v[i] + strlen("family=");
    int len = (int)strcspn(v, " ");
    for (f = 0; f < n_families && (strncmp(families[f], v, (size_t)len) || families[f][len]); f++) continue;
    if (f == n_families) {
      cr_assert_lt(n_families, FAMILY_MAX);
      snprintf(families[n_families++], sizeof families[0], "%.*s", len, v);
    }
    if (taken[f]++ >= SAMPLE_PER_FAMILY) continue;
    expect_thread_independent(gate.v[i]);
    ran++;
  }
  cr_expect_geq(n_families, 14, "every family of the gate is sampled");
  cr_expect_eq(ran, n_families * SAMPLE_PER_FAMILY);
  spec_set_free(&gate);
}

/* Cases whose fills split over all 16 workers (the gate's first cases are mostly too small to split). */
static const char *const big_cases[] = {
    /* 2 x 520 prefill rows: query, kv and index streams */
    "family=csa4.chain op=CompressedSparseAttention ratio=4 b=2 heads=2 iheads=1 topk=512 window=128 start=0 "
    "prefill=520 decode=4 cap=131 outputs=6 bias=1 sink=zero scale=none seed=2161528630",
    /* 32767 synthetic past records of both caches */
    "family=csa4.state op=CompressedSparseAttention ratio=4 b=1 heads=2 iheads=4 topk=7 window=128 start=131071 "
    "prefill=1 decode=4 cap=32770 outputs=6 bias=135 sink=rand scale=none seed=2371627104",
    /* 8191 synthetic FP8 records (a gate case) */
    "family=csa128.state op=CompressedSparseAttention ratio=128 cache=fp8 b=1 heads=1 window=128 start=1048574 "
    "prefill=1 decode=1 cap=8192 bias=1x1x1x8320 sink=zero scale=none seed=1596929112",
};

Test(fill_threads, big_cases_are_byte_identical_at_1_2_and_16_threads, .timeout = 600) {
  size_t i;
  for (i = 0; i < sizeof big_cases / sizeof big_cases[0]; i++) {
    long long largest = expect_thread_independent(big_cases[i]);
    cr_expect_geq(largest, 16LL * CASES_FILL_DRAWS_MIN, "case %zu is too small to split over 16 workers", i);
  }
}
