/*
** test_csa4_device.c: the CSA ratio-4 launcher (device/csa4_device.h) on a
** GPU, against the oracle (oracle_csa4_run), byte for byte: every output
** and the four scratch stage payloads (IndexQueryFinalize, IndexScoring,
** Selection, CandidateAssembly), with every canary intact.
**
** chain:    prefill (current_kv longer than the cursor) -> decode -> decode
**           (finishing a record) -> multi-token decodes, the device's
**           present_* fed back as its past_*, the oracle threaded the same
**           way; bias of rank 4, 2 and 1 on some steps; the last step in the
**           5-output configuration;
** large:    a state start at position 4096 with 1024 past records of each
**           cache, topk 512 (the radix select), tied index scores (a row of
**           zero index weights, repeated key records);
** capture:  both configurations: a warm decode captured once and replayed
**           with new data and cursors, byte-exact with the latch 0; cursors
**           the oracle rejects (total < S, an index-key capacity only, both
**           capacities, total < 0) raise CSA4_LATCH_CURSOR_BIT;
** errors:   index_topk above CSA4_TOPK_MAX, an index past capacity below
**           start / 4 and a capture before a warm pass, each refused as the
**           oracle refuses it, launching nothing.
** Host only (no GPU): the CUBIN holds every kernel; nx_csa_rank_key orders
** as nx_csa_rank_before.  Without a GPU the GPU tests skip and the binary
** exits 77 (gpu_test_main.c).
*/
#include "device/csa4_device.h"
#include "device/device.h"
#include "device/kernels/csa4_abi.h"
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
#define ID CSA4_INDEX_DIM
#define N_OUT CSA_OUTPUT_MAX

/* One step's geometry. */
typedef struct csa4_case {
  const char *name;
  long long B, S, H, IH, topk, L, Rp, Rc, Rpi, Rci, total;
  int bias_rank; /* -1 none; 1: [1]; 2: [S, 128 + topk]; 4: [B, H, S, 128 + topk], one row masked */
  int n_out;     /* 5 or 6 */
  int line;
} csa4_case;

/* Host tensors, the oracle's outputs and payloads, and their device mirrors. */
typedef struct fixture {
  csa4_case c;
  csa_attrs attrs;
  int n_in;
  csa_test_io io;
  tensor payload[CSA4_STAGE_COUNT];
} fixture;

static const char *const output_names[N_OUT] = {"Y", "present_compressed_kv", "present_compression_carry",
                                                "present_index_key", "present_index_carry", "selected_indices"};
static const char *const stage_names[CSA4_STAGE_COUNT] = {"stage IndexQueryFinalize", "stage IndexScoring",
                                                          "stage Selection", "stage CandidateAssembly"};

static void shape_set(tensor *t, dtype dt, int rank, long long a, long long b, long long c, long long d) {
  t->dt = dt;
  t->rank = rank;
  t->shape[0] = a, t->shape[1] = b, t->shape[2] = c, t->shape[3] = d;
  cr_assert_eq(tensor_alloc(t), 0);
}

static float *f32_of(const tensor *t) { return (float *)t->data; }

/*
** A past carry [B, 8, 2, W] as a previous step leaves it: slots 0..3 hold
** the last finished block (when start >= 4), slots 4.. the current block's
** start % 4 tokens, some scores -inf; with start == 0 every slot holds junk,
** which the reset must discard.
*/
static void fill_carry(tensor *t, long long start, long long width, unsigned seed) {
  long long i, n = tensor_numel(t);
  for (i = 0; i < n; i++) {
    const long long x = i % width, part = (i / width) % 2, slot = (i / (2 * width)) % CSA4_SLOTS;
    const int used = start == 0 || (slot < 4 ? start >= 4 : slot - 4 < start % 4);
    float v = used ? gpu_test_value(seed, i) : part ? csa_test_neg_inf() : 0.0f;
    if (used && part && (slot + x) % 5 == 1) v = csa_test_neg_inf();
    f32_of(t)[i] = v;
  }
}

/* Past records of both caches, by the numerics' quantizers; index records repeat every 7 (ties). */
static void fill_past(fixture *f, unsigned seed) {
  tensor *main = &f->io.in[CSA_IN_PAST_COMPRESSED_KV], *key = &f->io.in[CSA_IN_PAST_INDEX_KEY];
  long long r, k;
  float x[D];
  for (r = 0; r < main->shape[0] * main->shape[1]; r++) {
    for (k = 0; k < D; k++) x[k] = gpu_test_value(seed, r * D + k) * (k % 3 ? 1.0f : 0.25f);
    csa_test_fp8_record(x, (unsigned char *)main->data + r * CSA_FP8_RECORD_BYTES);
  }
  for (r = 0; r < key->shape[0] * key->shape[1]; r++) {
    for (k = 0; k < ID; k++) x[k] = gpu_test_value(seed + 1, (r % 7) * ID + k);
    nx_csa_fp4_record_write(x, (nx_u8 *)key->data + r * CSA4_INDEX_RECORD_BYTES);
  }
}

/* Every input's values for (case, seed); total from the case. */
static void fixture_fill(fixture *f, unsigned seed) {
  const csa4_case *c = &f->c;
  static const int plain[] = {CSA_IN_QUERY,      CSA_IN_CURRENT_KV, CSA_IN_COMPRESSOR_KV, CSA_IN_COMPRESSOR_GATE,
                              CSA_IN_HEAD_SINK,  CSA_IN_INDEX_QUERY, CSA_IN_INDEX_WEIGHT, CSA_IN_INDEX_KV,
                              CSA_IN_INDEX_GATE, CSA_IN_BIAS};
  long long start = c->total >= c->S ? c->total - c->S : 0, i;
  size_t k;
  for (k = 0; k < sizeof plain / sizeof plain[0]; k++) {
    tensor *t = &f->io.in[plain[k]];
    for (i = 0; t->dt && i < tensor_numel(t); i++) f32_of(t)[i] = gpu_test_value(seed * 32u + (unsigned)plain[k], i);
  }
  for (i = 0; i < tensor_numel(&f->io.in[CSA_IN_COMPRESSOR_APE]); i++)
    f32_of(&f->io.in[CSA_IN_COMPRESSOR_APE])[i] = gpu_test_value(seed * 32u + 4, i) * 0.5f;
  for (i = 0; i < tensor_numel(&f->io.in[CSA_IN_INDEX_APE]); i++)
    f32_of(&f->io.in[CSA_IN_INDEX_APE])[i] = gpu_test_value(seed * 32u + 15, i) * 0.5f;
  for (i = 0; i < D; i++) f32_of(&f->io.in[CSA_IN_COMPRESSOR_NORM])[i] = 0.75f + gpu_test_value(seed * 32u + 5, i) * 0.125f;
  for (i = 0; i < ID; i++) f32_of(&f->io.in[CSA_IN_INDEX_NORM])[i] = 0.75f + gpu_test_value(seed * 32u + 16, i) * 0.125f;
  for (i = 0; i < c->IH; i++) f32_of(&f->io.in[CSA_IN_INDEX_WEIGHT])[i] = 0.0f; /* row (0, 0): all scores tie at +0 */
  fill_carry(&f->io.in[CSA_IN_PAST_CARRY], start, CSA4_SOURCE_WIDTH, seed * 32u + 7);
  fill_carry(&f->io.in[CSA_IN_PAST_INDEX_CARRY], start, CSA4_INDEX_SOURCE, seed * 32u + 18);
  fill_past(f, seed * 32u + 6);
  for (i = 0; i < c->B; i++) ((int32_t *)f->io.in[CSA_IN_SEQLENS_K].data)[i] = (int32_t)c->total;
  ((int64_t *)f->io.in[CSA_IN_TOTAL_SEQ].data)[0] = c->total;
  if (c->bias_rank >= 0) { /* a few -inf; rank 4 masks row (B-1, H-1, S-1) entirely */
    tensor *t = &f->io.in[CSA_IN_BIAS];
    long long n = tensor_numel(t), cand = t->shape[t->rank - 1];
    for (i = 0; i < n; i++) {
      f32_of(t)[i] *= 0.5f;
      if ((cand > 1 && i % cand % 7 == 3) || (t->rank == 4 && i / cand == n / cand - 1)) f32_of(t)[i] = csa_test_neg_inf();
    }
  }
}

static void fixture_build(fixture *f, const csa4_case *c, unsigned seed) {
  const long long B = c->B, S = c->S, cand = CSA_DENSE_WINDOW + c->topk;
  memset(f, 0, sizeof *f);
  f->c = *c;
  f->attrs.compression_ratio = CSA4_RATIO;
  f->attrs.cache_format = "fp8_e4m3_block64";
  f->attrs.num_heads = c->H;
  f->attrs.head_dim = D;
  f->attrs.qk_rope_head_dim = CSA_ROPE_DIM;
  f->attrs.index_num_heads = c->IH;
  f->attrs.index_head_dim = ID;
  f->attrs.index_topk = c->topk;
  shape_set(&f->io.in[CSA_IN_QUERY], DTYPE_F32, 4, B, S, c->H, D);
  shape_set(&f->io.in[CSA_IN_CURRENT_KV], DTYPE_F32, 3, B, c->L, D, 0);
  shape_set(&f->io.in[CSA_IN_COMPRESSOR_KV], DTYPE_F32, 3, B, S, CSA4_SOURCE_WIDTH, 0);
  shape_set(&f->io.in[CSA_IN_COMPRESSOR_GATE], DTYPE_F32, 3, B, S, CSA4_SOURCE_WIDTH, 0);
  shape_set(&f->io.in[CSA_IN_COMPRESSOR_APE], DTYPE_F32, 2, CSA4_RATIO, CSA4_SOURCE_WIDTH, 0, 0);
  shape_set(&f->io.in[CSA_IN_COMPRESSOR_NORM], DTYPE_F32, 1, D, 0, 0, 0);
  shape_set(&f->io.in[CSA_IN_PAST_COMPRESSED_KV], DTYPE_U8, 3, B, c->Rp, CSA_FP8_RECORD_BYTES, 0);
  shape_set(&f->io.in[CSA_IN_PAST_CARRY], DTYPE_F32, 4, B, CSA4_SLOTS, 2, CSA4_SOURCE_WIDTH);
  shape_set(&f->io.in[CSA_IN_SEQLENS_K], DTYPE_I32, 1, B, 0, 0, 0);
  shape_set(&f->io.in[CSA_IN_TOTAL_SEQ], DTYPE_I64, 0, 0, 0, 0, 0);
  shape_set(&f->io.in[CSA_IN_HEAD_SINK], DTYPE_F32, 1, c->H, 0, 0, 0);
  shape_set(&f->io.in[CSA_IN_INDEX_QUERY], DTYPE_F32, 4, B, S, c->IH, ID);
  shape_set(&f->io.in[CSA_IN_INDEX_WEIGHT], DTYPE_F32, 3, B, S, c->IH, 0);
  shape_set(&f->io.in[CSA_IN_INDEX_KV], DTYPE_F32, 3, B, S, CSA4_INDEX_SOURCE, 0);
  shape_set(&f->io.in[CSA_IN_INDEX_GATE], DTYPE_F32, 3, B, S, CSA4_INDEX_SOURCE, 0);
  shape_set(&f->io.in[CSA_IN_INDEX_APE], DTYPE_F32, 2, CSA4_RATIO, CSA4_INDEX_SOURCE, 0, 0);
  shape_set(&f->io.in[CSA_IN_INDEX_NORM], DTYPE_F32, 1, ID, 0, 0, 0);
  shape_set(&f->io.in[CSA_IN_PAST_INDEX_KEY], DTYPE_U8, 3, B, c->Rpi, CSA4_INDEX_RECORD_BYTES, 0);
  shape_set(&f->io.in[CSA_IN_PAST_INDEX_CARRY], DTYPE_F32, 4, B, CSA4_SLOTS, 2, CSA4_INDEX_SOURCE);
  if (c->bias_rank == 1) shape_set(&f->io.in[CSA_IN_BIAS], DTYPE_F32, 1, 1, 0, 0, 0);
  if (c->bias_rank == 2) shape_set(&f->io.in[CSA_IN_BIAS], DTYPE_F32, 2, S, cand, 0, 0);
  if (c->bias_rank == 4) shape_set(&f->io.in[CSA_IN_BIAS], DTYPE_F32, 4, B, c->H, S, cand);
  f->n_in = c->bias_rank >= 0 ? CSA_INPUT_COUNT : CSA_IN_INDEX_LAST + 1;
  shape_set(&f->io.want[CSA_OUT_Y], DTYPE_F32, 4, B, S, c->H, D);
  shape_set(&f->io.want[CSA_OUT_PRESENT_COMPRESSED_KV], DTYPE_U8, 3, B, c->Rc, CSA_FP8_RECORD_BYTES, 0);
  shape_set(&f->io.want[CSA_OUT_PRESENT_CARRY], DTYPE_F32, 4, B, CSA4_SLOTS, 2, CSA4_SOURCE_WIDTH);
  shape_set(&f->io.want[CSA_OUT_PRESENT_INDEX_KEY], DTYPE_U8, 3, B, c->Rci, CSA4_INDEX_RECORD_BYTES, 0);
  shape_set(&f->io.want[CSA_OUT_PRESENT_INDEX_CARRY], DTYPE_F32, 4, B, CSA4_SLOTS, 2, CSA4_INDEX_SOURCE);
  shape_set(&f->io.want[CSA_OUT_SELECTED], DTYPE_I32, 4, B, c->IH, S, c->topk);
  shape_set(&f->payload[CSA4_STAGE_INDEX_QUERY], DTYPE_F32, 4, B, S, c->IH, ID);
  shape_set(&f->payload[CSA4_STAGE_INDEX_SCORES], DTYPE_F32, 3, B, S, c->Rci, 0);
  shape_set(&f->payload[CSA4_STAGE_SELECTION], DTYPE_I32, 3, B, S, c->topk, 0);
  shape_set(&f->payload[CSA4_STAGE_SCORES], DTYPE_F32, 4, B, S, c->H, cand);
  fixture_fill(f, seed);
}

/* Runs the oracle into want and payload; returns its rc, the error in *err. */
static int fixture_oracle(fixture *f, op_error *err) {
  const tensor *in[CSA_INPUT_COUNT];
  tensor *out[N_OUT];
  csa4_trace trace = {0};
  int i;
  for (i = 0; i < CSA_INPUT_COUNT; i++) in[i] = &f->io.in[i];
  for (i = 0; i < N_OUT; i++) out[i] = &f->io.want[i];
  trace.index_query = f->payload[CSA4_STAGE_INDEX_QUERY].data;
  trace.index_scores = f->payload[CSA4_STAGE_INDEX_SCORES].data;
  trace.selection = f->payload[CSA4_STAGE_SELECTION].data;
  trace.scores = f->payload[CSA4_STAGE_SCORES].data;
  return oracle_csa4_run(&f->attrs, in, f->n_in, out, f->c.n_out, &trace, err);
}

static void fixture_fill_outputs(device_runtime *rt, fixture *f, device_csa4 *k, int byte) {
  csa_test_io_fill_outputs(rt, &f->io, byte);
  cr_assert_eq(device_csa4_scratch_fill(k, byte), 0, "scratch_fill: %s", device_runtime_error(rt));
}

static void fixture_free(fixture *f) {
  int i;
  csa_test_io_free(&f->io);
  for (i = 0; i < CSA4_STAGE_COUNT; i++) tensor_free(&f->payload[i]);
}

static int fixture_execute(fixture *f, device_csa4 *k, op_error *err) {
  return device_csa4_execute(k, f->io.p_in, f->n_in, f->io.p_out, f->c.n_out, err);
}

/* Sets the cursor (host and device) to total. */
static void fixture_set_total(device_runtime *rt, fixture *f, long long total) {
  f->c.total = total;
  csa_test_io_set_total(rt, &f->io, total);
}

/* Every output (of the configuration) and payload equals the oracle's; canaries and scratch intact. */
static void fixture_compare(device_runtime *rt, fixture *f, device_csa4 *k, const char *step) {
  char when[256], report[1024];
  int i;
  snprintf(when, sizeof when, "%s:%d %s, %s", __FILE__, f->c.line, f->c.name, step);
  for (i = 0; i < f->c.n_out + CSA4_STAGE_COUNT; i++) {
    const int is_out = i < f->c.n_out, st = i - f->c.n_out;
    const tensor *want = is_out ? &f->io.want[i] : &f->payload[st];
    size_t bytes = tensor_bytes(want);
    unsigned char *got = malloc(bytes ? bytes : 1);
    cr_assert_not_null(got);
    if (is_out && bytes) GPU_RT_OK(rt, device_buffer_download(rt, &f->io.d_out[i], got, bytes));
    if (!is_out) {
      cr_assert_eq(device_csa4_stage_bytes(k, (csa4_stage)st), bytes, "%s: %s has %zu bytes, the oracle's %zu", when,
                   stage_names[st], device_csa4_stage_bytes(k, (csa4_stage)st), bytes);
      GPU_RT_OK(rt, device_csa4_stage_copy(k, (csa4_stage)st, got, bytes));
    }
    csa_test_compare(is_out ? output_names[i] : stage_names[st], when, want->dt,
                     want->dt == DTYPE_U8 ? want->shape[2] : 1, got, want->data, bytes);
    free(got);
  }
  csa_test_io_expect_canaries(rt, &f->io, when);
  cr_expect_eq(device_csa4_scratch_check(k, report, sizeof report), 0, "%s: %s", when, report);
}

static device_csa4 *csa4_open(device_runtime *rt, const csa_attrs *attrs) {
  device_csa4 *k = NULL;
  char err[4096];
  cr_assert_eq(device_csa4_create(rt, attrs, &k, err, sizeof err), 0, "create: %s", err);
  return k;
}

/* ---- host-only tests ------------------------------------------------------------- */

Test(csa4_device, compiles_to_an_sm90_cubin_with_every_kernel) {
  static const char *const names[] = {CSA4_KERNEL_STATE,        CSA4_KERNEL_MAIN_COMPRESS, CSA4_KERNEL_INDEX_COMPRESS,
                                      CSA4_KERNEL_INDEX_QUERY,  CSA4_KERNEL_INDEX_SCORE,   CSA4_KERNEL_SELECT,
                                      CSA4_KERNEL_BROADCAST,    CSA4_KERNEL_ATTN_SCORES,   CSA4_KERNEL_ATTN_SOFTMAX,
                                      CSA4_KERNEL_ATTN_VALUES,  CSA4_KERNEL_ATTN_GATHER};
  gpu_test_expect_cubin(CSA4_KERNEL_FILE, names, sizeof names / sizeof names[0]);
}

/* csa4_select radix-selects on nx_csa_rank_key: its order must be nx_csa_rank_before's. */
Test(csa4_device, rank_key_orders_as_rank_before) {
  static const uint32_t special[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                                     0xffc00000u, 0x00000001u, 0x80000001u, 0x3f800000u, 0xbf800000u};
  const int n_special = (int)(sizeof special / sizeof special[0]);
  long long i;
  for (i = 0; i < 200000; i++) {
    const unsigned r = (unsigned)i;
    float sa = gpu_test_value(1, i), sb = gpu_test_value(2, i);
    long long ia = (long long)((r * 2654435761u) % 4096u), ib = (long long)((r * 40503u) % 4096u);
    if (i % 3 == 0) sa = nx_f32_from_bits(special[i % n_special]);
    if (i % 5 == 0) sb = nx_f32_from_bits(special[(i / 5) % n_special]);
    if (i % 7 == 0) sb = sa; /* ties: the record decides */
    if (i % 11 == 0) ia = 0xffffffffll - (i % 3), ib = i % 3;
    cr_assert_eq(nx_csa_rank_before(sa, ia, sb, ib), nx_csa_rank_key(sa, ia) > nx_csa_rank_key(sb, ib),
                 "score %a (0x%08x) record %lld vs score %a (0x%08x) record %lld", (double)sa, nx_f32_bits(sa), ia,
                 (double)sb, nx_f32_bits(sb), ib);
  }
}

/* ---- GPU tests -------------------------------------------------------------------- */

/* Builds step c (threading the previous step's presents into its pasts), runs both sides, compares. */
static void run_step(device_runtime *rt, device_csa4 **k, fixture *f, fixture *prev, const csa4_case *c, unsigned seed,
                     const char *step) {
  static const int past_of[4][2] = {{CSA_IN_PAST_COMPRESSED_KV, CSA_OUT_PRESENT_COMPRESSED_KV},
                                    {CSA_IN_PAST_CARRY, CSA_OUT_PRESENT_CARRY},
                                    {CSA_IN_PAST_INDEX_KEY, CSA_OUT_PRESENT_INDEX_KEY},
                                    {CSA_IN_PAST_INDEX_CARRY, CSA_OUT_PRESENT_INDEX_CARRY}};
  op_error oerr, derr;
  int i, rc;
  fixture_build(f, c, seed);
  for (i = 0; prev && i < 4; i++) /* host pasts from the oracle's presents */
    memcpy(f->io.in[past_of[i][0]].data, prev->io.want[past_of[i][1]].data, tensor_bytes(&f->io.in[past_of[i][0]]));
  cr_assert_eq(fixture_oracle(f, &oerr), 0, "%s %s: the oracle rejected it: %s", c->name, step, oerr.message);
  csa_test_io_upload(rt, &f->io);
  for (i = 0; prev && i < 4; i++) f->io.t_in[past_of[i][0]].dptr = prev->io.d_out[past_of[i][1]].dptr; /* device's own */
  if (!*k) *k = csa4_open(rt, &f->attrs);
  fixture_fill_outputs(rt, f, *k, (int)(seed % 2 ? DEVICE_JUNK_BYTE : 0x5a));
  rc = fixture_execute(f, *k, &derr);
  cr_assert_eq(rc, DEVICE_CSA_OK, "%s %s: execute rc %d: %s", c->name, step, rc, derr.message);
  fixture_compare(rt, f, *k, step);
}

/*
** prefill of 10 (current_kv 13 rows, past the cursor) -> 11 -> 12 (record 2)
** -> 13 -> 17 and 21 (four tokens each, a record each); the last step has 5
** outputs.  topk 3, so rows with more causal records go through the radix
** select.
*/
Test(csa4_device, prefill_decode_chain_matches_the_oracle_with_every_payload) {
  static const struct { long long S, L, total; int bias_rank, n_out; } steps[] = {
      {10, 13, 10, 4, 6}, {1, 11, 11, -1, 6}, {1, 12, 12, 4, 6}, {1, 13, 13, 2, 6}, {4, 17, 17, 1, 6}, {4, 21, 21, 4, 5}};
  device_runtime *rt = gpu_test_runtime_or_skip();
  device_csa4 *k = NULL;
  fixture f[2];
  size_t si, n = sizeof steps / sizeof steps[0];
  for (si = 0; si < n; si++) {
    csa4_case c = {"chain", 2, steps[si].S, 2, 3, 3, steps[si].L, 6, 6, 6, 6, steps[si].total, steps[si].bias_rank,
                   steps[si].n_out, __LINE__};
    char step[64];
    snprintf(step, sizeof step, "step %zu, total %lld, %d outputs", si, c.total, c.n_out);
    run_step(rt, &k, &f[si % 2], si ? &f[(si + 1) % 2] : NULL, &c, 40 + (unsigned)si, step);
    if (si) fixture_free(&f[(si + 1) % 2]);
  }
  fixture_free(&f[(n - 1) % 2]);
  device_csa4_destroy(k);
  device_runtime_destroy(rt);
}

/* A state start at 4096: 1024 past records, topk 512 of up to 1025 causal ones, ties. */
Test(csa4_device, large_state_start_selects_exactly) {
  static const csa4_case cases[] = {
      {"large.6out", 1, 4, 2, 2, 512, 200, 1024, 1025, 1024, 1025, 4100, 2, 6, __LINE__},
      {"large.5out.topk7", 2, 4, 2, 3, 7, 128, 1024, 1026, 1024, 1026, 4100, -1, 5, __LINE__},
  };
  device_runtime *rt = gpu_test_runtime_or_skip();
  size_t ci;
  for (ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    device_csa4 *k = NULL;
    fixture f;
    run_step(rt, &k, &f, NULL, &cases[ci], 90 + (unsigned)ci, "eager");
    device_csa4_destroy(k);
    fixture_free(&f);
  }
  device_runtime_destroy(rt);
}

/*
** A warm decode captured once, in each configuration, and replayed under new
** data and cursors (one finishing a record); then cursors the oracle
** rejects, which must raise the latch and damage nothing; then a good one.
** Main capacity 8, index capacity 6, so total 28 breaks the index key only.
*/
Test(csa4_device, captured_decode_replays_match_and_bad_cursors_latch) {
  static const long long good[] = {14, 15, 16, 20, 27, 14};
  static const long long bad[] = {0, 28, 40, -1}; /* total < S, index capacity, both, total < 0 */
  static const int configs[] = {6, 5};
  device_runtime *rt = gpu_test_runtime_or_skip();
  size_t ci, i;
  for (ci = 0; ci < 2; ci++) {
    csa4_case c = {"capture", 2, 1, 2, 2, 3, 32, 8, 8, 6, 6, 14, 4, configs[ci], __LINE__};
    fixture f;
    device_csa4 *k = NULL;
    device_graph *g = NULL;
    op_error oerr, derr;
    unsigned latch = 99;
    char when[96];
    int rc;
    c.name = ci ? "capture.5out" : "capture.6out";
    run_step(rt, &k, &f, NULL, &c, 70, "warm-up");
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
      fixture_fill_outputs(rt, &f, k, i % 2 ? 0x5a : DEVICE_JUNK_BYTE);
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
      cr_expect_eq(latch, CSA4_LATCH_CURSOR_BIT, "%s: total %lld (oracle: %s): latch 0x%x", c.name, bad[i],
                   csa_contract_name(oerr.rule), latch);
      cr_expect_eq(device_csa4_scratch_check(k, when, sizeof when), 0, "poisoned replay: %s", when);
    }
    GPU_RT_OK(rt, device_runtime_latch_reset(rt));
    fixture_set_total(rt, &f, good[sizeof good / sizeof good[0] - 1]);
    cr_assert_eq(fixture_oracle(&f, &oerr), 0, "%s", oerr.message);
    fixture_fill_outputs(rt, &f, k, 0x5a);
    GPU_RT_OK(rt, device_graph_replay(rt, g));
    GPU_RT_OK(rt, device_runtime_latch_read(rt, &latch));
    cr_expect_eq(latch, 0, "%s: the replay after the poisoned ones raised the latch", c.name);
    fixture_compare(rt, &f, k, "replay after poison");
    device_graph_destroy(g);
    device_csa4_destroy(k);
    fixture_free(&f);
  }
  device_runtime_destroy(rt);
}

Test(csa4_device, contract_and_cursor_errors_match_the_oracle_without_launching) {
  csa4_case c = {"errors", 2, 1, 2, 2, 3, 32, 8, 8, 6, 6, 14, 2, 6, __LINE__};
  device_runtime *rt = gpu_test_runtime_or_skip();
  fixture f;
  device_csa4 *k, *wide;
  op_error oerr, derr;
  fixture_build(&f, &c, 95);
  csa_test_io_upload(rt, &f.io);
  k = csa4_open(rt, &f.attrs);

  /* capture is refused, with the reason, until a pass succeeds */
  GPU_RT_OK(rt, device_runtime_capture_begin(rt));
  cr_expect_eq(fixture_execute(&f, k, &derr), DEVICE_CSA_FAILED);
  gpu_test_capture_end_any(rt);
  cr_expect_not_null(strstr(derr.message, "eager pass"), "%s", derr.message);

  /* index_topk above the selection's capacity: the contract, on both sides */
  f.attrs.index_topk = CSA4_TOPK_MAX + 1;
  f.io.want[CSA_OUT_SELECTED].shape[3] = f.io.t_out[CSA_OUT_SELECTED].meta.shape[3] = CSA4_TOPK_MAX + 1;
  wide = csa4_open(rt, &f.attrs);
  cr_expect_eq(fixture_oracle(&f, &oerr), -1);
  cr_expect_eq(oerr.rule, CSA_CONTRACT_TOPK, "oracle: %s", oerr.message);
  cr_expect_eq(fixture_execute(&f, wide, &derr), DEVICE_CSA_OP_ERROR, "%s", derr.message);
  gpu_test_expect_same_error(&derr, &oerr, "index_topk 513");
  device_csa4_destroy(wide);
  f.attrs.index_topk = c.topk;
  f.io.want[CSA_OUT_SELECTED].shape[3] = f.io.t_out[CSA_OUT_SELECTED].meta.shape[3] = c.topk;

  /* the eager cursor: the index key's past capacity (input 17) below start / 4 */
  f.io.in[CSA_IN_PAST_INDEX_KEY].shape[1] = f.io.t_in[CSA_IN_PAST_INDEX_KEY].meta.shape[1] = 2;
  fixture_fill_outputs(rt, &f, k, DEVICE_JUNK_BYTE);
  cr_expect_eq(fixture_oracle(&f, &oerr), -1);
  cr_expect_eq(oerr.rule, CSA_CONTRACT_PAST_CAPACITY, "oracle: %s", oerr.message);
  cr_expect_eq(fixture_execute(&f, k, &derr), DEVICE_CSA_OP_ERROR, "%s", derr.message);
  gpu_test_expect_same_error(&derr, &oerr, "index past capacity");
  csa_test_io_expect_untouched(rt, &f.io, "index past capacity");
  f.io.in[CSA_IN_PAST_INDEX_KEY].shape[1] = f.io.t_in[CSA_IN_PAST_INDEX_KEY].meta.shape[1] = c.Rpi;
  cr_expect_eq(device_csa4_capture_ready(k, NULL, 0), 0, "a failed pass warmed the instance");

  /* and a good pass afterwards */
  cr_assert_eq(fixture_oracle(&f, &oerr), 0, "%s", oerr.message);
  cr_expect_eq(fixture_execute(&f, k, &derr), DEVICE_CSA_OK, "%s", derr.message);
  fixture_compare(rt, &f, k, "after the errors");
  cr_expect_eq(device_csa4_capture_ready(k, NULL, 0), 1);
  device_csa4_destroy(k);
  fixture_free(&f);
  device_runtime_destroy(rt);
}
