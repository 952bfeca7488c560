/*
** bench_loops.c: `bitgate bench --loops` (bench_loops.h).  The probes are
** the B = 1 attention's inner loops at their pass's launch shape (grid and
** block as csa_device_attention_plan launches them at 640 candidates), each
** with the C sums its kernel must reproduce bit for bit.
*/
#include "harness/bench_loops.h"
#include "device/kernels/csa_attention_abi.h"
#include "harness/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VALUE_HEADS CSA_NARROW_VALUE_HEADS /* a warp each */
#define VALUE_DIMS CSA_NARROW_VALUE_DIMS   /* a lane each */
#define SCORE_HEADS CSA_RESIDENT_HEADS
#define SCORE_CANDS CSA_RESIDENT_CANDS
#define SCORE_DIMS 32 /* CSA_RESIDENT_K (csa_attention_resident.h), the dims of a stage */

typedef struct loop_probe {
  const char *kernel, *name;
  unsigned grid, block;
  int n, reps;
  size_t a_len, b_len;     /* floats of a and b */
  size_t sums_per_thread;  /* 0: one sum a block (thread 0's) */
  void (*c_sums)(const float *a, const float *b, int n, int reps, float *out); /* a full block's, in thread order */
} loop_probe;

/* The sums a block of p writes: its threads' first ones are the C sums' first ones. */
static size_t block_sums(const loop_probe *p) { return p->sums_per_thread ? p->sums_per_thread * p->block : 1; }

/* Made-up operands, a pure function of i: p-like weights in (0, 1/640], values in [-2, 2). */
static float weight_at(size_t i) { return (float)((i * 2654435761u >> 8) % 1000 + 1) * (1.0f / 640000.0f); }
static float value_at(size_t i) { return (float)((int)((i * 40503u + 17u) % 4096u) - 2048) * (1.0f / 1024.0f); }

/* Thread (warp h, lane d): p[h] . v[., d] over n candidates, reps times on one chain. */
static void values_sums(const float *p, const float *v, int n, int reps, float *out) {
  int h, d, r, i;
  for (h = 0; h < VALUE_HEADS; h++)
    for (d = 0; d < VALUE_DIMS; d++) {
      float acc = 0.0f;
      for (r = 0; r < reps; r++)
        for (i = 0; i < n; i++) acc = acc + p[h * n + i] * v[i * VALUE_DIMS + d];
      out[h * VALUE_DIMS + d] = acc;
    }
}

/* Thread tid of 128 with two heads a thread: its sums are heads 2 (tid / 32) and 2 (tid / 32) + 1 of dim tid % 32. */
static void two_heads_sums(const float *p, const float *v, int n, int reps, float *out) {
  float one[VALUE_HEADS * VALUE_DIMS];
  int tid, e;
  values_sums(p, v, n, reps, one);
  for (tid = 0; tid < 128; tid++)
    for (e = 0; e < 2; e++) out[2 * tid + e] = one[(2 * (tid / 32) + e) * VALUE_DIMS + tid % 32];
}

/* The same threads adding their first four products over and over, n / 4 times a call. */
static void add_chain_sums(const float *p, const float *v, int n, int reps, float *out) {
  int h, d, r, i, t;
  for (h = 0; h < VALUE_HEADS; h++)
    for (d = 0; d < VALUE_DIMS; d++) {
      float acc = 0.0f;
      for (r = 0; r < reps; r++)
        for (i = 0; i < n; i += 4)
          for (t = 0; t < 4; t++) acc = acc + p[h * n + t] * v[t * VALUE_DIMS + d];
      out[h * VALUE_DIMS + d] = acc;
    }
}

/* Chain thread tid of the resident tile: heads hl .. hl + 3 x candidate cl, over the stage's dims, reps times. */
static void resident_sums(const float *q, const float *k, int n, int reps, float *out) {
  int tid, e, r, d;
  (void)n;
  for (tid = 0; tid < 128; tid++) {
    const int warp = tid / 32, lane = tid % 32, hl = 8 * warp + 4 * (lane / 16), cl = lane % 16;
    for (e = 0; e < 4; e++) {
      float acc = 0.0f;
      for (r = 0; r < reps; r++)
        for (d = 0; d < SCORE_DIMS; d++) acc = acc + q[(hl + e) * SCORE_DIMS + d] * k[cl * SCORE_DIMS + d];
      out[4 * tid + e] = acc;
    }
  }
}

/* The sum of n exps, reps times on one chain (the segmented probe: reps 1). */
static void softmax_sums(const float *w, const float *unused, int n, int reps, float *out) {
  float sum = 0.0f;
  int r, i;
  (void)unused;
  for (r = 0; r < reps; r++)
    for (i = 0; i < n; i++) sum = sum + w[i];
  out[0] = sum;
}

/*
** Each loop at its pass's grid, then alone: one block (the SM to itself),
** one warp (nothing to share the scheduler with).  Set side by side, they
** tell a loop held by its own chain from one held by what its warps share.
*/
#define VALUE_PROBE(name, kernel, grid, block, per_thread, c_sums) \
  {kernel, name, grid, block, 256, 3, VALUE_HEADS * 256, 256 * VALUE_DIMS, per_thread, c_sums}
#define VALUES(name, kernel, grid, block) VALUE_PROBE(name, kernel, grid, block, 1, values_sums)
#define TWO_HEADS(name, grid, block) VALUE_PROBE(name, "loop_probe_values_narrow", grid, block, 2, two_heads_sums)
#define SCORES(name, grid, block) \
  {"loop_probe_scores_resident", name, grid, block, SCORE_DIMS, 16, SCORE_HEADS * SCORE_DIMS, SCORE_CANDS * SCORE_DIMS, \
   4, resident_sums}
static const loop_probe probes[BENCH_LOOP_PROBES] = {
    TWO_HEADS("values chains (narrow values pass)", 128, 128),
    TWO_HEADS("values chains, one block alone", 1, 128),
    TWO_HEADS("values chains, one warp alone", 1, 32),
    VALUE_PROBE("values adds, operands in registers", "loop_probe_add_chain", 128, 256, 1, add_chain_sums),
    VALUE_PROBE("values adds in registers, one warp", "loop_probe_add_chain", 1, 32, 1, add_chain_sums),
    SCORES("scores stage (narrow resident pass, its 4 chain warps)", 80, 128),
    SCORES("scores stage, one warp alone", 1, 32),
    {"loop_probe_softmax_sum", "softmax sum (softmax pass, thread 0)", 64, 256, 640, 1, 640, 1, 0, softmax_sums},
    /* candidates for the values pass and the softmax's sum (loop_probe.cu says what each changes) */
    VALUES("candidate: values staged transposed", "loop_probe_values_transposed", 128, 256),
    {"loop_probe_softmax_segments", "candidate: softmax sum in segments", 64, 256, 640, 1, 640, 1, 0, softmax_sums},
};

/* Bits of the first sum of any block that differs from the C sums, into fig->mismatch; 1 when none. */
static int sums_match(const loop_probe *p, const float *got, const float *want, bench_loop_figure *fig) {
  const size_t sums = block_sums(p);
  size_t blk, i;
  for (blk = 0; blk < p->grid; blk++)
    for (i = 0; i < sums; i++) {
      const float g = got[blk * sums + i];
      if (memcmp(&g, &want[i], sizeof g)) {
        unsigned gb, wb;
        memcpy(&gb, &g, 4), memcpy(&wb, &want[i], 4);
        snprintf(fig->mismatch, sizeof fig->mismatch, "block %zu, sum %zu: 0x%08x (%.9g), C sum 0x%08x (%.9g)", blk,
                 i, gb, (double)g, wb, (double)want[i]);
        return 0;
      }
    }
  return 1;
}

/* One probe: a checked launch, then runs timed ones; buffers sized for it alone. */
static int measure_one(device_runtime *rt, const loop_probe *p, int runs, bench_loop_figure *fig, char *err,
                       size_t err_len) {
  device_buffer a = {0}, b = {0}, out = {0}, cyc = {0};
  float *ha = malloc(p->a_len * sizeof *ha), *hb = malloc(p->b_len * sizeof *hb);
  const size_t sums = block_sums(p), full = p->sums_per_thread ? p->sums_per_thread * 256 : 1; /* the C sums: blocks of <= 256 */
  float *got = malloc(p->grid * sums * sizeof *got), *want = malloc(full * sizeof *want);
  long long *cycles = malloc(p->grid * sizeof *cycles);
  double *per_block = malloc(p->grid * sizeof *per_block), *medians = malloc((size_t)runs * sizeof *medians);
  double *slowest = malloc((size_t)runs * sizeof *slowest);
  void *kernel;
  size_t i;
  int rc = -1, run;
  memset(fig, 0, sizeof *fig);
  snprintf(fig->name, sizeof fig->name, "%s", p->name);
  fig->grid = p->grid, fig->block = p->block, fig->terms = (long long)p->n * p->reps;
  if (!ha || !hb || !got || !want || !cycles || !per_block || !medians || !slowest) {
    snprintf(err, err_len, "%s: out of host memory", p->kernel);
    goto done;
  }
  for (i = 0; i < p->a_len; i++) ha[i] = weight_at(i);
  for (i = 0; i < p->b_len; i++) hb[i] = value_at(i);
  p->c_sums(ha, hb, p->n, p->reps, want);
  if (device_runtime_kernel(rt, "loop_probe.cu", p->kernel, &kernel) ||
      device_buffer_alloc(rt, p->a_len * sizeof *ha, &a) || device_buffer_alloc(rt, p->b_len * sizeof *hb, &b) ||
      device_buffer_alloc(rt, p->grid * sums * sizeof *got, &out) ||
      device_buffer_alloc(rt, p->grid * sizeof *cycles, &cyc) ||
      device_buffer_upload(rt, &a, ha, p->a_len * sizeof *ha) || device_buffer_upload(rt, &b, hb, p->b_len * sizeof *hb)) {
    snprintf(err, err_len, "%s: %s", p->kernel, device_runtime_error(rt));
    goto done;
  }
  for (run = -1; run < runs; run++) { /* run -1: the checked launch, untimed */
    int n = p->n, reps = p->reps;
    void *args[] = {&a.dptr, &b.dptr, &n, &reps, &out.dptr, &cyc.dptr};
    if (device_runtime_launch(rt, kernel, p->kernel, p->grid, p->block, args) ||
        device_buffer_download(rt, &cyc, cycles, p->grid * sizeof *cycles) ||
        (run < 0 && device_buffer_download(rt, &out, got, p->grid * sums * sizeof *got))) {
      snprintf(err, err_len, "%s: %s", p->kernel, device_runtime_error(rt));
      goto done;
    }
    if (run < 0) {
      fig->checked = sums_match(p, got, want, fig);
      if (!fig->checked) break;
      continue;
    }
    for (i = 0; i < p->grid; i++) per_block[i] = (double)cycles[i] / (double)fig->terms;
    medians[run] = bench_median_ms(per_block, (int)p->grid);
    slowest[run] = per_block[p->grid - 1]; /* sorted by bench_median_ms */
  }
  if (fig->checked) fig->median_block = bench_median_ms(medians, runs), fig->slowest_block = bench_median_ms(slowest, runs);
  rc = 0;
done:
  device_buffer_free(&a), device_buffer_free(&b), device_buffer_free(&out), device_buffer_free(&cyc);
  free(ha), free(hb), free(got), free(want), free(cycles), free(per_block), free(medians), free(slowest);
  return rc;
}

int bench_loops_measure(device_runtime *rt, int runs, bench_loop_figure *fig, char *err, size_t err_len) {
  int i;
  for (i = 0; i < BENCH_LOOP_PROBES; i++)
    if (measure_one(rt, &probes[i], runs, &fig[i], err, err_len)) return -1;
  return 0;
}

int bench_loops_print(const bench_loop_figure *fig, int runs) {
  int i, all = 1;
  printf("the attention's inner loops alone (device/kernels/loop_probe.cu), cycles a term of one chain\n");
  printf("%-40s %12s %7s %14s %14s\n", "loop", "grid x block", "terms", "median block", "slowest block");
  for (i = 0; i < BENCH_LOOP_PROBES; i++) {
    char shape[32];
    snprintf(shape, sizeof shape, "%u x %u", fig[i].grid, fig[i].block);
    if (fig[i].checked)
      printf("%-40s %12s %7lld %14.2f %14.2f\n", fig[i].name, shape, fig[i].terms, fig[i].median_block,
             fig[i].slowest_block);
    else
      printf("%-40s %12s %7lld %14s %14s\n", fig[i].name, shape, fig[i].terms, "-", "-"), all = 0;
  }
  printf("cycles: thread 0's clock64 around its block's loop over the chain's terms, the median of %d launches\n",
         runs);
  for (i = 0; i < BENCH_LOOP_PROBES; i++)
    if (!fig[i].checked) printf("%s: sums differ from the C sums, no figure: %s\n", fig[i].name, fig[i].mismatch);
  return all;
}
