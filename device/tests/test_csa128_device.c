/*
** test_csa128_device.c: the CSA ratio-128 launcher (device/csa128_device.h)
** on a GPU, against the oracle (oracle_csa128_run).
**
** cases:    a table of single steps (f32 and FP8 caches; prefill crossing a
**           record boundary, landing on one, decode in the middle of a block
**           and on a boundary, several tokens in one decode, current_kv
**           longer than the cursor, no bias / bias of rank 1, 2 and 4 with a
**           fully masked row, the scale attribute), each compared byte for
**           byte with the oracle under two junk patterns, with every canary
**           and the scratch intact;
** chain:    prefill -> decode -> decode -> decode across position 127, the
**           device's present_* outputs fed back as its past_* inputs, every
**           step compared with the oracle threaded the same way;
** capture:  a warm decode captured once and replayed with new data and new
**           cursors (one of them finishing a record), each replay equal to the
**           oracle with the latch 0; cursors the oracle rejects raise
**           CSA128_LATCH_CURSOR_BIT and leave every canary intact;
** errors:   contract and eager cursor errors give the oracle's op_error and
**           launch nothing; capture is refused before a warm pass.
** The sm_90 CUBIN test needs NVRTC only and runs without a GPU.
**
** Without a GPU every GPU test skips, naming the reason, and the binary exits
** 77 (gpu_test_main.c) so CTest reports it skipped.
*/
#include "device/csa128_device.h"
#include "device/device.h"
#include "device/kernels/csa128_abi.h"
#include "device/runtime.h"
#include "device/tests/csa_test_support.h"
#include "oracle/csa.h"
#include "oracle/numerics/numerics.h"
#include "oracle/numerics/nx_csa.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D CSA_HEAD_DIM

/* ---- fixture -------------------------------------------------------------------- */

/* One step's geometry. */
typedef struct csa_case {
  const char *name;
  csa_cache_format fmt;
  long long B, S, H, L, Rp, Rc, total;
  int bias_rank; /* -1 none; 1: [1]; 2: [S, 128 + Rc]; 4: [B, H, S, 128 + Rc], one row masked */
  float scale;   /* 0: the default 1/sqrt(512) */
  int line;
} csa_case;

#define CASE(...) {__VA_ARGS__, __LINE__}
static const csa_case csa_cases[] = {
    /* name, fmt, B, S, H, L, Rp, Rc, total, bias_rank, scale */
    CASE("f32.prefill.cross127", CSA_CACHE_F32, 2, 130, 2, 130, 0, 2, 130, -1, 0.0f),
    CASE("fp8.prefill.cross127.bias4", CSA_CACHE_FP8, 2, 130, 2, 130, 0, 2, 130, 4, 0.0f),
    CASE("fp8.prefill.exact128.bias2", CSA_CACHE_FP8, 1, 128, 2, 128, 0, 1, 128, 2, 0.0f),
    CASE("fp8.decode.mid.bias2", CSA_CACHE_FP8, 2, 1, 3, 128, 3, 4, 301, 2, 0.0f),
    CASE("f32.decode.boundary.bias1.scale", CSA_CACHE_F32, 1, 1, 2, 128, 1, 2, 256, 1, 0.125f),
    CASE("fp8.decode.multi.short_window", CSA_CACHE_FP8, 2, 4, 2, 40, 1, 3, 258, 4, 0.0f),
    CASE("f32.decode.multi.bias4", CSA_CACHE_F32, 1, 3, 2, 128, 2, 3, 384, 4, 0.0f),
    CASE("f32.prefill.kv_longer_than_total.rc0", CSA_CACHE_F32, 1, 5, 2, 9, 0, 0, 5, -1, 0.0f),
};
#define CSA_CASE_COUNT (sizeof csa_cases / sizeof csa_cases[0])

/* Host tensors, the oracle's outputs, and their device mirrors. */
typedef struct csa_fixture {
  csa_case c;
  csa_attrs attrs;
  int n_in;
  csa_test_io io;
  const tensor *h_in[CSA_INPUT_COUNT];
  tensor *h_want[CSA_OUTPUT_COUNT];
} csa_fixture;

static void shape_set(tensor *t, dtype dt, int rank, long long a, long long b, long long c, long long d) {
  t->dt = dt;
  t->rank = rank;
  t->shape[0] = a, t->shape[1] = b, t->shape[2] = c, t->shape[3] = d;
  cr_assert_eq(tensor_alloc(t), 0);
}

static float *f32_of(const tensor *t) { return (float *)t->data; }

static long long width_of(csa_cache_format fmt) {
  return fmt == CSA_CACHE_FP8 ? CSA_FP8_RECORD_BYTES : D;
}

/*
** Past carry: slots before start % 128 hold tokens (kv and score, a few
** scores -inf), the rest are empty (kv 0, score -inf), as a previous step
** leaves them; with start == 0 every slot holds junk values, which the reset
** must discard.
*/
static void fill_carry(tensor *t, long long start, unsigned seed) {
  long long b, j, d, B = t->shape[0];
  long long filled = start == 0 ? CSA128_RATIO : start % CSA128_RATIO;
  for (b = 0; b < B; b++)
    for (j = 0; j < CSA128_RATIO; j++)
      for (d = 0; d < D; d++) {
        long long kv_at = ((b * CSA128_RATIO + j) * 2) * D + d, score_at = kv_at + D;
        int used = j < filled;
        f32_of(t)[kv_at] = used ? gpu_test_value(seed, kv_at) : 0.0f;
        f32_of(t)[score_at] = used && (j + d) % 5 != 1 ? gpu_test_value(seed + 1, score_at) : csa_test_neg_inf();
      }
}

/* Past records: FP8 records built by the numerics' quantizer, or f32 values. */
static void fill_past_cache(tensor *t, csa_cache_format fmt, unsigned seed) {
  long long r, n_rec = t->shape[0] * t->shape[1];
  for (r = 0; r < n_rec; r++) {
    float x[D];
    int k;
    for (k = 0; k < D; k++) x[k] = gpu_test_value(seed, r * D + k) * (k % 3 ? 1.0f : 0.25f);
    if (fmt == CSA_CACHE_F32) {
      memcpy(f32_of(t) + r * D, x, sizeof x);
      continue;
    }
    csa_test_fp8_record(x, (unsigned char *)t->data + r * CSA_FP8_RECORD_BYTES);
  }
}

/* The bias: values in [-1, 1), a few -inf; rank 4 masks row (B-1, H-1, S-1) entirely. */
static void fill_bias(csa_fixture *f, unsigned seed) {
  tensor *t = &f->io.in[CSA_IN_BIAS];
  long long n = tensor_numel(t), cand = t->shape[t->rank - 1], i;
  for (i = 0; i < n; i++) {
    float v = gpu_test_value(seed, i) * 0.5f;
    if (cand > 1 && i % cand % 7 == 3) v = csa_test_neg_inf();
    if (t->rank == 4 && i / cand == n / cand - 1) v = csa_test_neg_inf();
    f32_of(t)[i] = v;
  }
}

/* Every input's values for (case, seed); total from the case. */
static void fixture_fill(csa_fixture *f, unsigned seed) {
  const csa_case *c = &f->c;
  long long start = c->total >= c->S ? c->total - c->S : 0, i;
  static const int plain[] = {CSA_IN_QUERY, CSA_IN_CURRENT_KV, CSA_IN_COMPRESSOR_KV, CSA_IN_COMPRESSOR_GATE,
                              CSA_IN_HEAD_SINK};
  size_t k;
  for (k = 0; k < sizeof plain / sizeof plain[0]; k++) {
    tensor *t = &f->io.in[plain[k]];
    for (i = 0; i < tensor_numel(t); i++) f32_of(t)[i] = gpu_test_value(seed * 32u + (unsigned)plain[k], i);
  }
  for (i = 0; i < CSA128_RATIO * D; i++) f32_of(&f->io.in[CSA_IN_COMPRESSOR_APE])[i] = gpu_test_value(seed * 32u + 4, i) * 0.5f;
  for (i = 0; i < D; i++) f32_of(&f->io.in[CSA_IN_COMPRESSOR_NORM])[i] = 0.75f + gpu_test_value(seed * 32u + 5, i) * 0.125f;
  fill_carry(&f->io.in[CSA_IN_PAST_CARRY], start, seed * 32u + 7);
  fill_past_cache(&f->io.in[CSA_IN_PAST_COMPRESSED_KV], c->fmt, seed * 32u + 6);
  for (i = 0; i < c->B; i++) ((int32_t *)f->io.in[CSA_IN_SEQLENS_K].data)[i] = (int32_t)c->total;
  ((int64_t *)f->io.in[CSA_IN_TOTAL_SEQ].data)[0] = c->total;
  if (c->bias_rank >= 0) fill_bias(f, seed * 32u + 19);
}

static void fixture_build(csa_fixture *f, const csa_case *c, unsigned seed) {
  const dtype cdt = c->fmt == CSA_CACHE_F32 ? DTYPE_F32 : DTYPE_U8;
  const long long W = width_of(c->fmt), cand = CSA_DENSE_WINDOW + c->Rc;
  int i;
  memset(f, 0, sizeof *f);
  f->c = *c;
  f->attrs.compression_ratio = CSA128_RATIO;
  f->attrs.cache_format = c->fmt == CSA_CACHE_FP8 ? "fp8_e4m3_block64" : "f32";
  f->attrs.num_heads = c->H;
  f->attrs.head_dim = D;
  f->attrs.qk_rope_head_dim = CSA_ROPE_DIM;
  f->attrs.has_scale = c->scale != 0.0f;
  f->attrs.scale = c->scale;
  shape_set(&f->io.in[CSA_IN_QUERY], DTYPE_F32, 4, c->B, c->S, c->H, D);
  shape_set(&f->io.in[CSA_IN_CURRENT_KV], DTYPE_F32, 3, c->B, c->L, D, 0);
  shape_set(&f->io.in[CSA_IN_COMPRESSOR_KV], DTYPE_F32, 3, c->B, c->S, D, 0);
  shape_set(&f->io.in[CSA_IN_COMPRESSOR_GATE], DTYPE_F32, 3, c->B, c->S, D, 0);
  shape_set(&f->io.in[CSA_IN_COMPRESSOR_APE], DTYPE_F32, 2, CSA128_RATIO, D, 0, 0);
  shape_set(&f->io.in[CSA_IN_COMPRESSOR_NORM], DTYPE_F32, 1, D, 0, 0, 0);
  shape_set(&f->io.in[CSA_IN_PAST_COMPRESSED_KV], cdt, 3, c->B, c->Rp, W, 0);
  shape_set(&f->io.in[CSA_IN_PAST_CARRY], DTYPE_F32, 4, c->B, CSA128_RATIO, 2, D);
  shape_set(&f->io.in[CSA_IN_SEQLENS_K], DTYPE_I32, 1, c->B, 0, 0, 0);
  shape_set(&f->io.in[CSA_IN_TOTAL_SEQ], DTYPE_I64, 0, 0, 0, 0, 0);
  shape_set(&f->io.in[CSA_IN_HEAD_SINK], DTYPE_F32, 1, c->H, 0, 0, 0);
  if (c->bias_rank == 1) shape_set(&f->io.in[CSA_IN_BIAS], DTYPE_F32, 1, 1, 0, 0, 0);
  if (c->bias_rank == 2) shape_set(&f->io.in[CSA_IN_BIAS], DTYPE_F32, 2, c->S, cand, 0, 0);
  if (c->bias_rank == 4) shape_set(&f->io.in[CSA_IN_BIAS], DTYPE_F32, 4, c->B, c->H, c->S, cand);
  f->n_in = c->bias_rank >= 0 ? CSA_INPUT_COUNT : CSA_IN_HEAD_SINK + 1;
  shape_set(&f->io.want[CSA_OUT_Y], DTYPE_F32, 4, c->B, c->S, c->H, D);
  shape_set(&f->io.want[CSA_OUT_PRESENT_COMPRESSED_KV], cdt, 3, c->B, c->Rc, W, 0);
  shape_set(&f->io.want[CSA_OUT_PRESENT_CARRY], DTYPE_F32, 4, c->B, CSA128_RATIO, 2, D);
  for (i = 0; i < CSA_INPUT_COUNT; i++) f->h_in[i] = &f->io.in[i];
  for (i = 0; i < CSA_OUTPUT_COUNT; i++) f->h_want[i] = &f->io.want[i];
  fixture_fill(f, seed);
}

/* Runs the oracle into want; returns its rc, error in *err. */
static int fixture_oracle(csa_fixture *f, op_error *err) {
  return oracle_csa128_run(&f->attrs, f->h_in, f->n_in, f->h_want, CSA_OUTPUT_COUNT, NULL, err);
}

static void fixture_free(csa_fixture *f) { csa_test_io_free(&f->io); }

static int fixture_execute(csa_fixture *f, device_csa128 *k, op_error *err) {
  return device_csa128_execute(k, f->io.p_in, f->n_in, f->io.p_out, CSA_OUTPUT_COUNT, err);
}

static const char *const output_names[CSA_OUTPUT_COUNT] = {"Y", "present_compressed_kv",
                                                           "present_compression_carry"};

/* Every output byte equals the oracle's; every canary (inputs too) and the scratch intact. */
static void fixture_compare(device_runtime *rt, csa_fixture *f, device_csa128 *k, const char *when) {
  char report[1024], where[256], label[256];
  int i;
  snprintf(where, sizeof where, "%s:%d %s (%s)", __FILE__, f->c.line, f->c.name, when);
  for (i = 0; i < CSA_OUTPUT_COUNT; i++) {
    size_t bytes = tensor_bytes(&f->io.want[i]);
    unsigned char *got = malloc(bytes ? bytes : 1);
    cr_assert_not_null(got);
    if (bytes) GPU_RT_OK(rt, device_buffer_download(rt, &f->io.d_out[i], got, bytes));
    csa_test_compare(output_names[i], where, f->io.want[i].dt, CSA_FP8_RECORD_BYTES, got, f->io.want[i].data, bytes);
    free(got);
  }
  snprintf(label, sizeof label, "%s (%s)", f->c.name, when);
  csa_test_io_expect_canaries(rt, &f->io, label);
  cr_expect_eq(device_csa128_scratch_check(k, report, sizeof report), 0, "%s (%s): %s", f->c.name, when, report);
}

static device_csa128 *csa_open(device_runtime *rt, const csa_attrs *attrs) {
  device_csa128 *k = NULL;
  char err[4096];
  cr_assert_eq(device_csa128_create(rt, attrs, &k, err, sizeof err), 0, "create: %s", err);
  return k;
}

/* Sets the cursor (host and device) to total. */
static void fixture_set_total(device_runtime *rt, csa_fixture *f, long long total) {
  f->c.total = total;
  csa_test_io_set_total(rt, &f->io, total);
}

/* ---- tests ---------------------------------------------------------------------- */

/* Needs NVRTC, not a GPU. */
Test(csa128_device, compiles_to_an_sm90_cubin_with_every_kernel) {
  static const char *const names[] = {CSA128_KERNEL_STATE,        CSA128_KERNEL_COMPRESS,
                                      CSA128_KERNEL_ATTN_GATHER,  CSA128_KERNEL_ATTN_SCORES,
                                      CSA128_KERNEL_ATTN_SOFTMAX, CSA128_KERNEL_ATTN_VALUES};
  gpu_test_expect_cubin(CSA128_KERNEL_FILE, names, sizeof names / sizeof names[0]);
}

Test(csa128_device, every_case_matches_the_oracle_byte_for_byte) {
  device_runtime *rt = gpu_test_runtime_or_skip();
  size_t ci;
  for (ci = 0; ci < CSA_CASE_COUNT; ci++) {
    static const int junk[2] = {DEVICE_JUNK_BYTE, 0x5a};
    csa_fixture f;
    device_csa128 *k;
    op_error oerr, derr;
    char reason[256];
    int rc, pass;
    fixture_build(&f, &csa_cases[ci], 1 + (unsigned)ci);
    cr_assert_eq(fixture_oracle(&f, &oerr), 0, "%s: oracle rejected the case: %s", f.c.name, oerr.message);
    csa_test_io_upload(rt, &f.io);
    k = csa_open(rt, &f.attrs);
    cr_expect_eq(device_csa128_capture_ready(k, reason, sizeof reason), 0);
    cr_expect_not_null(strstr(reason, "eager"), "%s", reason);
    for (pass = 0; pass < 2; pass++) { /* two junk patterns: an unwritten byte cannot match both */
      csa_test_io_fill_outputs(rt, &f.io, junk[pass]);
      cr_expect_eq(device_csa128_scratch_fill(k, junk[pass]), 0);
      rc = fixture_execute(&f, k, &derr);
      cr_assert_eq(rc, DEVICE_CSA_OK, "%s: execute rc %d: %s", f.c.name, rc, derr.message);
      fixture_compare(rt, &f, k, pass ? "eager, junk 0x5a" : "eager, junk 0xa5");
    }
    cr_expect_eq(device_csa128_capture_ready(k, NULL, 0), 1);
    device_csa128_destroy(k);
    fixture_free(&f);
  }
  device_runtime_destroy(rt);
}

/*
** prefill (126 tokens) -> decode 127 -> decode 128 (finishes record 0) ->
** decode 129.  The device's past_* inputs are its previous present_*
** outputs; the oracle's are its own.
*/
Test(csa128_device, prefill_decode_chain_across_a_record_boundary) {
  static const long long totals[] = {126, 127, 128, 129};
  static const csa_cache_format formats[] = {CSA_CACHE_F32, CSA_CACHE_FP8};
  device_runtime *rt = gpu_test_runtime_or_skip();
  size_t fi, si;
  for (fi = 0; fi < 2; fi++) {
    csa_fixture steps[2];
    device_csa128 *k = NULL;
    for (si = 0; si < sizeof totals / sizeof totals[0]; si++) {
      csa_fixture *f = &steps[si % 2], *prev = &steps[(si + 1) % 2];
      csa_case c = {"chain", formats[fi], 2, 1, 2, 128, 2, 2, totals[si], 4, 0.0f, __LINE__};
      op_error oerr, derr;
      char when[64];
      int rc;
      if (si == 0) c.S = 126, c.L = 126;
      if (totals[si] < 128) c.L = totals[si];
      c.name = formats[fi] == CSA_CACHE_FP8 ? "chain.fp8" : "chain.f32";
      fixture_build(f, &c, 40 + (unsigned)si);
      if (si > 0) { /* thread the state: host from the oracle, device from the device */
        memcpy(f->io.in[CSA_IN_PAST_COMPRESSED_KV].data, prev->io.want[CSA_OUT_PRESENT_COMPRESSED_KV].data,
               tensor_bytes(&f->io.in[CSA_IN_PAST_COMPRESSED_KV]));
        memcpy(f->io.in[CSA_IN_PAST_CARRY].data, prev->io.want[CSA_OUT_PRESENT_CARRY].data,
               tensor_bytes(&f->io.in[CSA_IN_PAST_CARRY]));
      }
      cr_assert_eq(fixture_oracle(f, &oerr), 0, "%s step %zu: %s", c.name, si, oerr.message);
      csa_test_io_upload(rt, &f->io);
      if (si > 0) {
        f->io.t_in[CSA_IN_PAST_COMPRESSED_KV].dptr = prev->io.d_out[CSA_OUT_PRESENT_COMPRESSED_KV].dptr;
        f->io.t_in[CSA_IN_PAST_CARRY].dptr = prev->io.d_out[CSA_OUT_PRESENT_CARRY].dptr;
      }
      if (!k) k = csa_open(rt, &f->attrs);
      rc = fixture_execute(f, k, &derr);
      cr_assert_eq(rc, DEVICE_CSA_OK, "%s step %zu: execute rc %d: %s", c.name, si, rc, derr.message);
      snprintf(when, sizeof when, "step %zu, total %lld", si, totals[si]);
      fixture_compare(rt, f, k, when);
      if (si > 0) fixture_free(prev);
    }
    fixture_free(&steps[(sizeof totals / sizeof totals[0] - 1) % 2]);
    device_csa128_destroy(k);
  }
  device_runtime_destroy(rt);
}

/*
** A decode step, warm, then captured once; replayed with new data under
** several cursors (one finishing record 1, one record 2), each equal to the
** oracle with the latch 0.  Cursors the oracle rejects (present capacity,
** total < S, past capacity) raise CSA128_LATCH_CURSOR_BIT and damage no
** canary; a good cursor afterwards replays correctly again.
*/
Test(csa128_device, captured_decode_replays_match_the_oracle_and_latch_bad_cursors) {
  static const long long good[] = {200, 255, 256, 300, 384, 201};
  static const long long bad[] = {1000, 0, 512}; /* past capacity, total < S, present capacity */
  static const csa_cache_format formats[] = {CSA_CACHE_FP8, CSA_CACHE_F32};
  device_runtime *rt = gpu_test_runtime_or_skip();
  size_t fi, i;
  for (fi = 0; fi < 2; fi++) {
    csa_case c = {"capture", formats[fi], 2, 1, 2, 128, 3, 3, 200, 4, 0.0f, __LINE__};
    csa_fixture f;
    device_csa128 *k;
    device_graph *g = NULL;
    op_error oerr, derr;
    unsigned latch = 99;
    char when[96];
    int rc;
    c.name = formats[fi] == CSA_CACHE_FP8 ? "capture.fp8" : "capture.f32";
    fixture_build(&f, &c, 70);
    cr_assert_eq(fixture_oracle(&f, &oerr), 0, "%s", oerr.message);
    csa_test_io_upload(rt, &f.io);
    k = csa_open(rt, &f.attrs);
    rc = fixture_execute(&f, k, &derr);
    cr_assert_eq(rc, DEVICE_CSA_OK, "%s warm-up: %s", c.name, derr.message);
    fixture_compare(rt, &f, k, "warm-up");
    GPU_RT_OK(rt, device_runtime_latch_reset(rt));
    GPU_RT_OK(rt, device_runtime_capture_begin(rt));
    rc = fixture_execute(&f, k, &derr);
    GPU_RT_OK(rt, device_runtime_capture_end(rt, &g));
    cr_assert_eq(rc, DEVICE_CSA_OK, "%s capture: %s", c.name, derr.message);

    for (i = 0; i < sizeof good / sizeof good[0]; i++) {
      f.c.total = good[i];
      fixture_fill(&f, 80 + (unsigned)i); /* new data, consistent with the new cursor */
      csa_test_io_upload_inputs(rt, &f.io);
      cr_assert_eq(fixture_oracle(&f, &oerr), 0, "%s total %lld: %s", c.name, good[i], oerr.message);
      csa_test_io_fill_outputs(rt, &f.io, i % 2 ? 0x5a : DEVICE_JUNK_BYTE);
      GPU_RT_OK(rt, device_graph_replay(rt, g));
      GPU_RT_OK(rt, device_runtime_latch_read(rt, &latch));
      snprintf(when, sizeof when, "replay, total %lld", good[i]);
      cr_expect_eq(latch, 0, "%s (%s): latch 0x%x", c.name, when, latch);
      fixture_compare(rt, &f, k, when);
    }
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      fixture_set_total(rt, &f, bad[i]);
      cr_expect_neq(fixture_oracle(&f, &oerr), 0, "%s: the oracle accepted total %lld", c.name, bad[i]);
      GPU_RT_OK(rt, device_runtime_latch_reset(rt));
      GPU_RT_OK(rt, device_graph_replay(rt, g));
      GPU_RT_OK(rt, device_runtime_latch_read(rt, &latch));
      cr_expect_eq(latch, CSA128_LATCH_CURSOR_BIT, "%s: total %lld (oracle: %s): latch 0x%x", c.name, bad[i],
                   csa_contract_name(oerr.rule), latch);
      cr_expect_eq(device_csa128_scratch_check(k, when, sizeof when), 0, "poisoned replay: %s", when);
    }
    /* the last good cursor again: latch stays 0, outputs the oracle's */
    GPU_RT_OK(rt, device_runtime_latch_reset(rt));
    fixture_set_total(rt, &f, good[sizeof good / sizeof good[0] - 1]);
    cr_assert_eq(fixture_oracle(&f, &oerr), 0, "%s", oerr.message);
    csa_test_io_fill_outputs(rt, &f.io, 0x5a);
    GPU_RT_OK(rt, device_graph_replay(rt, g));
    GPU_RT_OK(rt, device_runtime_latch_read(rt, &latch));
    cr_expect_eq(latch, 0, "%s: restored replay raised the latch", c.name);
    fixture_compare(rt, &f, k, "replay after poison");

    device_graph_destroy(g);
    device_csa128_destroy(k);
    fixture_free(&f);
  }
  device_runtime_destroy(rt);
}

Test(csa128_device, contract_and_cursor_errors_match_the_oracle_without_launching) {
  device_runtime *rt = gpu_test_runtime_or_skip();
  csa_fixture f;
  device_csa128 *k;
  op_error oerr, derr;
  fixture_build(&f, &csa_cases[3], 90); /* fp8 decode, bias rank 2 */
  csa_test_io_upload(rt, &f.io);
  k = csa_open(rt, &f.attrs);

  /* capture is refused, with the reason, until a pass succeeds */
  GPU_RT_OK(rt, device_runtime_capture_begin(rt));
  cr_expect_eq(fixture_execute(&f, k, &derr), DEVICE_CSA_FAILED);
  gpu_test_capture_end_any(rt);
  cr_expect_not_null(strstr(derr.message, "eager pass"), "%s", derr.message);

  /* gate of the wrong dtype */
  f.io.in[CSA_IN_COMPRESSOR_GATE].dt = f.io.t_in[CSA_IN_COMPRESSOR_GATE].meta.dt = DTYPE_I32;
  cr_expect_eq(fixture_oracle(&f, &oerr), -1);
  cr_expect_eq(fixture_execute(&f, k, &derr), DEVICE_CSA_OP_ERROR, "%s", derr.message);
  gpu_test_expect_same_error(&derr, &oerr, "gate dtype");
  f.io.in[CSA_IN_COMPRESSOR_GATE].dt = f.io.t_in[CSA_IN_COMPRESSOR_GATE].meta.dt = DTYPE_F32;

  /* a bias whose candidate axis is neither 1 nor 128 + Rc */
  f.io.in[CSA_IN_BIAS].shape[1]--;
  f.io.t_in[CSA_IN_BIAS].meta.shape[1]--;
  cr_expect_eq(fixture_oracle(&f, &oerr), -1);
  cr_expect_eq(fixture_execute(&f, k, &derr), DEVICE_CSA_OP_ERROR, "%s", derr.message);
  gpu_test_expect_same_error(&derr, &oerr, "bias candidates");
  f.io.in[CSA_IN_BIAS].shape[1]++;
  f.io.t_in[CSA_IN_BIAS].meta.shape[1]++;

  /* the eager cursor: each rule of csa_validate_cursor */
  {
    static const long long totals[] = {-1, 0, 10000};
    size_t i;
    for (i = 0; i < sizeof totals / sizeof totals[0]; i++) {
      char what[64];
      fixture_set_total(rt, &f, totals[i]);
      snprintf(what, sizeof what, "total %lld", totals[i]);
      csa_test_io_fill_outputs(rt, &f.io, DEVICE_JUNK_BYTE);
      cr_expect_eq(fixture_oracle(&f, &oerr), -1, "%s", what);
      cr_expect_eq(fixture_execute(&f, k, &derr), DEVICE_CSA_OP_ERROR, "%s: %s", what, derr.message);
      gpu_test_expect_same_error(&derr, &oerr, what);
      csa_test_io_expect_untouched(rt, &f.io, what);
    }
  }
  cr_expect_eq(device_csa128_capture_ready(k, NULL, 0), 0, "a failed pass warmed the instance");

  /* past capacity: Rp below start / 128 */
  fixture_set_total(rt, &f, 301);
  f.io.in[CSA_IN_PAST_COMPRESSED_KV].shape[1] = 1;
  f.io.t_in[CSA_IN_PAST_COMPRESSED_KV].meta.shape[1] = 1;
  cr_expect_eq(fixture_oracle(&f, &oerr), -1);
  cr_expect_eq(fixture_execute(&f, k, &derr), DEVICE_CSA_OP_ERROR, "%s", derr.message);
  gpu_test_expect_same_error(&derr, &oerr, "past capacity");
  f.io.in[CSA_IN_PAST_COMPRESSED_KV].shape[1] = f.c.Rp;
  f.io.t_in[CSA_IN_PAST_COMPRESSED_KV].meta.shape[1] = f.c.Rp;

  /* and a good pass afterwards */
  cr_assert_eq(fixture_oracle(&f, &oerr), 0, "%s", oerr.message);
  cr_expect_eq(fixture_execute(&f, k, &derr), DEVICE_CSA_OK, "%s", derr.message);
  fixture_compare(rt, &f, k, "after the errors");
  device_csa128_destroy(k);
  fixture_free(&f);
  device_runtime_destroy(rt);
}
