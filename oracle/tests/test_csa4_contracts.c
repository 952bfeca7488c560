/*
** test_csa4_contracts.c: the ratio-4 contract and cursor rules (oracle/SPEC.md
** R1), the stage payload layouts (R8) and the 5- versus 6-output configs.
*/
#include "oracle/tests/test_csa4_fixture.h"

#include "oracle/numerics/numerics.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- contracts ------------------------------------------------------------ */

enum mutation4 {
  M_RATIO, M_FORMAT, M_HEADS, M_SCALE, M_IN_18, M_IN_21, M_NO_SEQLENS, M_NO_INDEX_GATE, M_NONE_PAST_KEY,
  M_OUT_3, M_OUT_7, M_INDEX_DIM_64, M_INDEX_DIM_ABSENT, M_F32_FORMAT, M_FP4_FORMAT, M_DEFAULT_FORMAT, M_HEAD_DIM,
  M_ROPE, M_KEY_DT, M_WEIGHT_DT, M_PAST_DT, M_IH_0, M_IH_NEG, M_TOPK_0, M_TOPK_513, M_NORM_RANK, M_WEIGHT_RANK,
  M_KEY_NEG, M_EMPTY_Q, M_APE_ROWS, M_KV_WIDTH, M_IQ_HEADS, M_IW_SEQ, M_IAPE_WIDTH, M_INORM, M_KEY_WIDTH,
  M_ICARRY_SLOTS, M_CARRY_WIDTH, M_PAST_WIDTH, M_BIAS_DT, M_BIAS_RANK, M_BIAS_BCAST, M_OUT3_DT, M_OUT5_DT,
  M_OUT4_DT, M_OUT5_TOPK, M_OUT5_IH, M_OUT3_WIDTH, M_OUT3_CAP, M_OUT4_RANK, M_OUT1_WIDTH, M_BIAS_CAND,
  M_TOTAL_NEG, M_TOTAL_SHORT, M_PAST_CAP, M_PAST_KEY_CAP, M_PRESENT_CAP, M_PRESENT_KEY_CAP
};

/* Resizes axis `axis` of t (reallocating its data). */
static void resize(tensor *t, int axis, long long n) {
  long long s[4];
  memcpy(s, t->shape, sizeof s);
  s[axis] = n;
  fx4_make(t, t->dt, t->rank, s);
}

static void set_total(fixture4 *f, long long t) { ((int64_t *)f->t_in[CSA_IN_TOTAL_SEQ].data)[0] = t; }

static void set_bias(fixture4 *f, int rank, long long d0, long long d1, long long d2, long long d3) {
  long long s[4] = {d0, d1, d2, d3};
  fx4_make(&f->t_in[CSA_IN_BIAS], DTYPE_F32, rank, s);
  f->n_in = 20;
}

/* Base: B 1, S 2, heads 1, IH 1, topk 2, total 2 (start 0); Rp = Rpi = 1, Rc = Rci = 1. */
static void mutate4(fixture4 *f, int m) {
  tensor *in = f->t_in, *out = f->t_out;
  switch (m) {
  case M_RATIO: f->a.compression_ratio = 64; break;
  case M_FORMAT: f->a.cache_format = "bf16"; break;
  case M_HEADS: f->a.num_heads = 0; break;
  case M_SCALE: f->a.has_scale = 1, f->a.scale = INFINITY; break;
  case M_IN_18: f->n_in = 18; break;
  case M_IN_21: f->n_in = 21; break;
  case M_NO_SEQLENS: f->in[CSA_IN_SEQLENS_K] = NULL; break;
  case M_NO_INDEX_GATE: f->in[CSA_IN_INDEX_GATE] = NULL; break;
  case M_NONE_PAST_KEY: in[CSA_IN_PAST_INDEX_KEY].dt = DTYPE_NONE; break;
  case M_OUT_3: f->n_out = 3; break;
  case M_OUT_7: f->n_out = 7; break; /* rejected before any output is read */
  case M_INDEX_DIM_64: f->a.index_head_dim = 64; break;
  case M_INDEX_DIM_ABSENT: f->a.index_head_dim = 0; break;
  case M_F32_FORMAT: f->a.cache_format = "f32"; break;
  case M_FP4_FORMAT: f->a.cache_format = "fp4_e2m1_block32"; break;
  case M_DEFAULT_FORMAT: f->a.cache_format = NULL; break;
  case M_HEAD_DIM: f->a.head_dim = 256; break;
  case M_ROPE: f->a.qk_rope_head_dim = 32; break;
  case M_KEY_DT: in[CSA_IN_PAST_INDEX_KEY].dt = DTYPE_F32; break;
  case M_WEIGHT_DT: in[CSA_IN_INDEX_WEIGHT].dt = DTYPE_F16; break;
  case M_PAST_DT: in[CSA_IN_PAST_COMPRESSED_KV].dt = DTYPE_F32; break;
  case M_IH_0: f->a.index_num_heads = 0; break;
  case M_IH_NEG: f->a.index_num_heads = -2; break;
  case M_TOPK_0: f->a.index_topk = 0; break;
  case M_TOPK_513: f->a.index_topk = 513; break;
  case M_NORM_RANK: in[CSA_IN_INDEX_NORM].rank = 2, in[CSA_IN_INDEX_NORM].shape[1] = 1; break;
  case M_WEIGHT_RANK: in[CSA_IN_INDEX_WEIGHT].rank = 4, in[CSA_IN_INDEX_WEIGHT].shape[3] = 1; break;
  case M_KEY_NEG: in[CSA_IN_PAST_INDEX_KEY].shape[1] = -1; break;
  case M_EMPTY_Q: in[CSA_IN_QUERY].shape[1] = 0; break;
  case M_APE_ROWS: resize(&in[CSA_IN_COMPRESSOR_APE], 0, 8); break;
  case M_KV_WIDTH: resize(&in[CSA_IN_COMPRESSOR_KV], 2, 512); break;
  case M_IQ_HEADS: resize(&in[CSA_IN_INDEX_QUERY], 2, 2); break;
  case M_IW_SEQ: resize(&in[CSA_IN_INDEX_WEIGHT], 1, 3); break;
  case M_IAPE_WIDTH: resize(&in[CSA_IN_INDEX_APE], 1, 128); break;
  case M_INORM: resize(&in[CSA_IN_INDEX_NORM], 0, 256); break;
  case M_KEY_WIDTH: resize(&in[CSA_IN_PAST_INDEX_KEY], 2, 69); break;
  case M_ICARRY_SLOTS: resize(&in[CSA_IN_PAST_INDEX_CARRY], 1, 16); break;
  case M_CARRY_WIDTH: resize(&in[CSA_IN_PAST_CARRY], 3, 512); break;
  case M_PAST_WIDTH: resize(&in[CSA_IN_PAST_COMPRESSED_KV], 2, 512); break;
  case M_BIAS_DT: set_bias(f, 1, 1, 0, 0, 0), in[CSA_IN_BIAS].dt = DTYPE_F16; break;
  case M_BIAS_RANK: set_bias(f, 0, 0, 0, 0, 0), in[CSA_IN_BIAS].rank = -1; break;
  case M_BIAS_BCAST: set_bias(f, 4, 1, 3, 1, 1); break;
  case M_OUT3_DT: out[CSA_OUT_PRESENT_INDEX_KEY].dt = DTYPE_F32; break;
  case M_OUT5_DT: out[CSA_OUT_SELECTED].dt = DTYPE_I64; break;
  case M_OUT4_DT: out[CSA_OUT_PRESENT_INDEX_CARRY].dt = DTYPE_BF16; break;
  case M_OUT5_TOPK: out[CSA_OUT_SELECTED].shape[3] = 3; break;
  case M_OUT5_IH: out[CSA_OUT_SELECTED].shape[1] = 2; break;
  case M_OUT3_WIDTH: out[CSA_OUT_PRESENT_INDEX_KEY].shape[2] = 583; break;
  case M_OUT3_CAP: out[CSA_OUT_PRESENT_INDEX_KEY].shape[1] = -1; break;
  case M_OUT4_RANK: out[CSA_OUT_PRESENT_INDEX_CARRY].rank = 3; break;
  case M_OUT1_WIDTH: out[CSA_OUT_PRESENT_COMPRESSED_KV].shape[2] = 68; break;
  case M_BIAS_CAND: set_bias(f, 4, 1, 1, 1, 128 + 1); break; /* 128 + Rc, not 128 + topk */
  case M_TOTAL_NEG: set_total(f, -1); break;
  case M_TOTAL_SHORT: set_total(f, 1); break;
  case M_PAST_CAP: set_total(f, 2 + 8); break; /* start 8: 2 past records, Rp 1 */
  case M_PAST_KEY_CAP: resize(&in[CSA_IN_PAST_COMPRESSED_KV], 1, 2), set_total(f, 2 + 8); break;
  case M_PRESENT_CAP: set_total(f, 2 + 6); break; /* start 6: 1 past record; 2 present, Rc 1 */
  case M_PRESENT_KEY_CAP: resize(&out[CSA_OUT_PRESENT_COMPRESSED_KV], 1, 2), set_total(f, 2 + 6); break;
  }
}

static const struct {
  int mutation, code, input, axis, line;
} contract_rows[] = {
    {M_RATIO, CSA_CONTRACT_RATIO, -1, -1, __LINE__},
    {M_FORMAT, CSA_CONTRACT_CACHE_FORMAT, -1, -1, __LINE__},
    {M_HEADS, CSA_CONTRACT_NUM_HEADS, -1, -1, __LINE__},
    {M_SCALE, CSA_CONTRACT_SCALE, -1, -1, __LINE__},
    {M_IN_18, CSA_CONTRACT_ARITY_INPUTS, -1, -1, __LINE__},
    {M_IN_21, CSA_CONTRACT_ARITY_INPUTS, -1, -1, __LINE__},
    {M_NO_SEQLENS, CSA_CONTRACT_REQUIRED_INPUT, 8, -1, __LINE__},
    {M_NO_INDEX_GATE, CSA_CONTRACT_INDEX_INPUT, 14, -1, __LINE__},
    {M_NONE_PAST_KEY, CSA_CONTRACT_INDEX_INPUT, 17, -1, __LINE__},
    {M_OUT_3, CSA_CONTRACT_ARITY_OUTPUTS, -1, -1, __LINE__},
    {M_OUT_7, CSA_CONTRACT_ARITY_OUTPUTS, -1, -1, __LINE__},
    {M_INDEX_DIM_64, CSA_CONTRACT_INDEX_HEAD_DIM, -1, -1, __LINE__},
    {M_INDEX_DIM_ABSENT, CSA_CONTRACT_INDEX_HEAD_DIM, -1, -1, __LINE__},
    {M_F32_FORMAT, CSA_CONTRACT_RATIO4_FORMAT, -1, -1, __LINE__},
    {M_FP4_FORMAT, CSA_CONTRACT_RATIO4_FORMAT, -1, -1, __LINE__},
    {M_DEFAULT_FORMAT, CSA_CONTRACT_RATIO4_FORMAT, -1, -1, __LINE__},
    {M_HEAD_DIM, CSA_CONTRACT_HEAD_DIM, -1, -1, __LINE__},
    {M_ROPE, CSA_CONTRACT_ROPE_DIM, -1, -1, __LINE__},
    {M_KEY_DT, CSA_CONTRACT_DTYPE, 17, -1, __LINE__},
    {M_WEIGHT_DT, CSA_CONTRACT_DTYPE, 12, -1, __LINE__},
    {M_PAST_DT, CSA_CONTRACT_DTYPE, 6, -1, __LINE__},
    {M_IH_0, CSA_CONTRACT_INDEX_HEADS, -1, -1, __LINE__},
    {M_IH_NEG, CSA_CONTRACT_INDEX_HEADS, -1, -1, __LINE__},
    {M_TOPK_0, CSA_CONTRACT_TOPK, -1, -1, __LINE__},
    {M_TOPK_513, CSA_CONTRACT_TOPK, -1, -1, __LINE__},
    {M_NORM_RANK, CSA_CONTRACT_RANK, 16, -1, __LINE__},
    {M_WEIGHT_RANK, CSA_CONTRACT_RANK, 12, -1, __LINE__},
    {M_KEY_NEG, CSA_CONTRACT_NEGATIVE_DIM, 17, 1, __LINE__},
    {M_EMPTY_Q, CSA_CONTRACT_EMPTY_QUERY, 0, 1, __LINE__},
    {M_APE_ROWS, CSA_CONTRACT_SHAPE, 4, 0, __LINE__},
    {M_KV_WIDTH, CSA_CONTRACT_SHAPE, 2, 2, __LINE__},
    {M_IQ_HEADS, CSA_CONTRACT_SHAPE, 11, 2, __LINE__},
    {M_IW_SEQ, CSA_CONTRACT_SHAPE, 12, 1, __LINE__},
    {M_IAPE_WIDTH, CSA_CONTRACT_SHAPE, 15, 1, __LINE__},
    {M_INORM, CSA_CONTRACT_SHAPE, 16, 0, __LINE__},
    {M_KEY_WIDTH, CSA_CONTRACT_SHAPE, 17, 2, __LINE__},
    {M_ICARRY_SLOTS, CSA_CONTRACT_SHAPE, 18, 1, __LINE__},
    {M_CARRY_WIDTH, CSA_CONTRACT_SHAPE, 7, 3, __LINE__},
    {M_PAST_WIDTH, CSA_CONTRACT_SHAPE, 6, 2, __LINE__},
    {M_BIAS_DT, CSA_CONTRACT_BIAS_DTYPE, 19, -1, __LINE__},
    {M_BIAS_RANK, CSA_CONTRACT_BIAS_RANK, 19, -1, __LINE__},
    {M_BIAS_BCAST, CSA_CONTRACT_BIAS_BROADCAST, 19, 1, __LINE__},
    {M_OUT3_DT, CSA_CONTRACT_OUTPUT_DTYPE, 103, -1, __LINE__},
    {M_OUT5_DT, CSA_CONTRACT_OUTPUT_DTYPE, 105, -1, __LINE__},
    {M_OUT4_DT, CSA_CONTRACT_OUTPUT_DTYPE, 104, -1, __LINE__},
    {M_OUT5_TOPK, CSA_CONTRACT_OUTPUT_SHAPE, 105, 3, __LINE__},
    {M_OUT5_IH, CSA_CONTRACT_OUTPUT_SHAPE, 105, 1, __LINE__},
    {M_OUT3_WIDTH, CSA_CONTRACT_OUTPUT_SHAPE, 103, 2, __LINE__},
    {M_OUT3_CAP, CSA_CONTRACT_OUTPUT_SHAPE, 103, 1, __LINE__},
    {M_OUT4_RANK, CSA_CONTRACT_OUTPUT_SHAPE, 104, -1, __LINE__},
    {M_OUT1_WIDTH, CSA_CONTRACT_OUTPUT_SHAPE, 101, 2, __LINE__},
    {M_BIAS_CAND, CSA_CONTRACT_BIAS_CANDIDATES, 19, 3, __LINE__},
    {M_TOTAL_NEG, CSA_CONTRACT_TOTAL_NEGATIVE, 9, -1, __LINE__},
    {M_TOTAL_SHORT, CSA_CONTRACT_TOTAL_SHORT, 9, -1, __LINE__},
    {M_PAST_CAP, CSA_CONTRACT_PAST_CAPACITY, 6, 1, __LINE__},
    {M_PAST_KEY_CAP, CSA_CONTRACT_PAST_CAPACITY, 17, 1, __LINE__},
    {M_PRESENT_CAP, CSA_CONTRACT_PRESENT_CAPACITY, 101, 1, __LINE__},
    {M_PRESENT_KEY_CAP, CSA_CONTRACT_PRESENT_CAPACITY, 103, 1, __LINE__},
};

Test(csa4, contracts) {
  const geometry4 g = geo4(1, 2, 1, 1, 2, 2);
  size_t k;
  for (k = 0; k < sizeof contract_rows / sizeof contract_rows[0]; k++) {
    fixture4 f;
    int rc;
    fx4_init(&f, &g);
    cr_assert(fx4_run(&f) == 0, "line %d: the base case must pass: %s", contract_rows[k].line, f.err.message);
    memset(f.t_out[0].data, (int)SENTINEL, tensor_bytes(&f.t_out[0]));
    memset(f.trace.output, (int)SENTINEL, sizeof(float));
    mutate4(&f, contract_rows[k].mutation);
    rc = fx4_run(&f);
    cr_expect(rc == -1 && f.err.cls == OP_ERR_CONTRACT && f.err.rule == contract_rows[k].code &&
                  f.err.input == contract_rows[k].input && f.err.axis == contract_rows[k].axis,
              "line %d: got rc %d class %d %s input %d axis %d, want %s input %d axis %d: %s", contract_rows[k].line,
              rc, f.err.cls, csa_contract_name(f.err.rule), f.err.input, f.err.axis,
              csa_contract_name(contract_rows[k].code), contract_rows[k].input, contract_rows[k].axis, f.err.message);
    cr_expect(u8p(&f.t_out[0])[0] == SENTINEL, "line %d: Y written on error", contract_rows[k].line);
    cr_expect(((unsigned char *)f.trace.output)[0] == SENTINEL, "line %d: trace written on error",
              contract_rows[k].line);
    if (contract_rows[k].mutation == M_NORM_RANK) f.t_in[CSA_IN_INDEX_NORM].rank = 1;
    if (contract_rows[k].mutation == M_WEIGHT_RANK) f.t_in[CSA_IN_INDEX_WEIGHT].rank = 3;
    fx4_free(&f);
  }
}

/* Every ratio-4 code has a row; only the ratio-128-only codes have none. */
Test(csa4, contract_table_reaches_every_ratio4_code) {
  int code;
  size_t k;
  for (code = 1; code < CSA_CONTRACT_COUNT; code++) {
    int seen = 0;
    for (k = 0; k < sizeof contract_rows / sizeof contract_rows[0]; k++) seen |= contract_rows[k].code == code;
    cr_expect(seen || code == CSA_CONTRACT_RATIO4_INPUT || code == CSA_CONTRACT_FP4_FORMAT,
              "no ratio-4 row for %s", csa_contract_name(code));
  }
  cr_expect(!strcmp(csa_contract_name(CSA_CONTRACT_INDEX_INPUT), "index_input"));
  cr_expect(!strcmp(csa_contract_name(CSA_CONTRACT_PRESENT_CAPACITY), "present_capacity"));
  cr_expect(!strcmp(csa_contract_name(CSA_CONTRACT_COUNT), "?"));
}

/* Exactly enough capacity in all four caches is accepted; one record less in any one is not. */
Test(csa4, cursor_capacity_boundaries) {
  static const struct {
    int which; /* 0 none short, 1 Rp, 2 Rpi, 3 Rc, 4 Rci */
    int code, input, line;
  } rows[] = {{0, CSA_CONTRACT_NONE, -1, __LINE__},
              {1, CSA_CONTRACT_PAST_CAPACITY, 6, __LINE__},
              {2, CSA_CONTRACT_PAST_CAPACITY, 17, __LINE__},
              {3, CSA_CONTRACT_PRESENT_CAPACITY, 101, __LINE__},
              {4, CSA_CONTRACT_PRESENT_CAPACITY, 103, __LINE__}};
  size_t k;
  for (k = 0; k < sizeof rows / sizeof rows[0]; k++) {
    geometry4 g = geo4(1, 3, 1, 1, 2, 13); /* start 10: 2 past records; 3 present */
    fixture4 f;
    int rc;
    g.Rp = 2 - (rows[k].which == 1), g.Rpi = 2 - (rows[k].which == 2);
    g.Rc = 3 - (rows[k].which == 3), g.Rci = 3 - (rows[k].which == 4);
    fx4_init(&f, &g);
    rc = fx4_run(&f);
    cr_expect(rows[k].code ? rc == -1 && f.err.rule == rows[k].code && f.err.input == rows[k].input : rc == 0,
              "line %d: rc %d %s input %d: %s", rows[k].line, rc, csa_contract_name(f.err.rule), f.err.input,
              f.err.message);
    fx4_free(&f);
  }
}

/* A valid ratio-4 call is refused by the ratio-128 entry point, and the reverse. */
Test(csa4, entry_points_check_the_ratio) {
  fixture4 f;
  csa_trace t128 = {0};
  const geometry4 g = geo4(1, 2, 1, 1, 2, 2);
  fx4_init(&f, &g);
  cr_expect(oracle_csa128_run(&f.a, f.in, f.n_in, f.out, f.n_out, &t128, &f.err) == -1 &&
            f.err.rule == CSA_CONTRACT_RATIO);
  fx4_free(&f);
}

/* ---- the 5- and 6-output configs and the payload layouts ------------------ */

/* B 2, S 9 from 0, 2 heads, 3 index heads, topk 4, bias [S, 132]: every layout has more than one of each axis. */
static void layout_fixture(fixture4 *f, int n_out) {
  geometry4 g = geo4(2, 9, 2, 3, 4, 9);
  g.n_out = n_out;
  g.bias_rank = 2, g.bias_shape[0] = 9, g.bias_shape[1] = 128 + 4;
  fx4_init(f, &g);
  fx4_fill_pattern(f, 3);
}

Test(csa4, five_outputs_compute_what_six_do) {
  fixture4 five, six;
  long long b, h, s;
  int o;
  layout_fixture(&five, 5);
  layout_fixture(&six, 6);
  fx4_run_ok(&five, __LINE__);
  fx4_run_ok(&six, __LINE__);
  for (o = 0; o < 5; o++)
    cr_expect(!memcmp(five.t_out[o].data, six.t_out[o].data, tensor_bytes(&six.t_out[o])), "output %d differs", o);
  cr_expect(u8p(&five.t_out[CSA_OUT_SELECTED])[0] == SENTINEL, "output 5 written in the 5-output config");
  cr_expect(!memcmp(five.trace.selection, six.trace.selection, 2 * 9 * 4 * sizeof(int)));
  cr_expect(!memcmp(five.trace.scores, six.trace.scores, 2 * 9 * 2 * 132 * sizeof(float)));
  for (b = 0; b < 2; b++)
    for (h = 0; h < 3; h++)
      for (s = 0; s < 9; s++)
        cr_expect(!memcmp((int *)six.t_out[CSA_OUT_SELECTED].data + ((b * 3 + h) * 9 + s) * 4,
                          six.trace.selection + (b * 9 + s) * 4, 4 * sizeof(int)),
                  "selected_indices[%lld, %lld, %lld] is not the row's selection", b, h, s);
  cr_expect(six.trace.selection[(1 * 9 + 8) * 4 + 1] >= 0, "row (1, 8) should select two records");
  fx4_free(&five);
  fx4_free(&six);
}

/* Ranks (score, record) pairs as the spec says, by insertion, apart from the oracle's sort. */
static void ref_select(const float *scores, long long limit, long long topk, int *out) {
  long long k, r;
  for (k = 0; k < topk; k++) {
    long long best = -1;
    for (r = 0; r < limit; r++) {
      int taken = 0;
      long long j;
      for (j = 0; j < k; j++) taken |= out[j] == r;
      if (taken) continue;
      if (best < 0 || nx_f32_total_cmp(scores[r], scores[best]) > 0) best = r;
    }
    out[k] = (int)best;
  }
}

Test(csa4, payload_layouts) {
  fixture4 f;
  const float ws = (1.0f / sqrtf(128.0f)) / sqrtf(3.0f);
  long long b, s, h, r, k, c;
  int d;
  layout_fixture(&f, 6);
  fx4_run_ok(&f, __LINE__);
  for (b = 0; b < 2; b++)
    for (r = 0; r < 3; r++) { /* records 0, 1 emitted; row 2 never written */
      const float *rec = f.trace.records + (b * 3 + r) * D, *irec = f.trace.index_records + (b * 3 + r) * ID;
      const unsigned char *key = u8p(&f.t_out[3]) + (b * 3 + r) * 68, *main = u8p(&f.t_out[1]) + (b * 3 + r) * 583;
      float q[ID];
      if (r == 2) {
        cr_expect(((const unsigned char *)rec)[0] == SENTINEL && ((const unsigned char *)irec)[0] == SENTINEL);
        continue;
      }
      memcpy(q, irec, sizeof q);
      for (k = 0; k < 4; k++) ref_fp4_roundtrip(q + 32 * k);
      for (d = 0; d < ID; d++) expect_bits_at("index record vs key bytes", d, ref_fp4_value(key, d), q[d], __LINE__);
      for (d = 448; d < D; d++) expect_bits_at("record tail vs cache", d, ref_fp8_value(main, d), rec[d], __LINE__);
    }
  for (b = 0; b < 2; b++)
    for (s = 0; s < 9; s++) {
      const long long limit = (s + 1) / 4, row = b * 9 + s;
      const float *sc = f.trace.index_scores + row * 3, *w = f32p(&f.t_in[CSA_IN_INDEX_WEIGHT]) + row * 3;
      int want_sel[4];
      for (r = 0; r < 3; r++) {
        float score = 0.0f;
        if (r >= limit) {
          expect_bits_at("index score past the limit", r, sc[r], NEG_INF, __LINE__);
          continue;
        }
        for (h = 0; h < 3; h++) {
          const float *q = f.trace.index_query + (row * 3 + h) * ID;
          float dot = 0.0f;
          for (d = 0; d < ID; d++) dot += q[d] * ref_fp4_value(u8p(&f.t_out[3]) + (b * 3 + r) * 68, d);
          score += ((dot > 0.0f ? dot : 0.0f) * w[h]) * ws;
        }
        expect_bits_at("index score", row * 3 + r, sc[r], score, __LINE__);
      }
      ref_select(sc, limit, 4, want_sel);
      for (k = 0; k < 4; k++) cr_expect(f.trace.selection[row * 4 + k] == want_sel[k], "row %lld slot %lld", row, k);
      for (h = 0; h < 2; h++) { /* candidate columns: dense = 9 at start 0, then the 4 slots */
        const float *cs = f.trace.scores + (row * 2 + h) * 132;
        for (c = 0; c < 132; c++) {
          int live = c < 9 ? c <= s : c < 13 && f.trace.selection[row * 4 + c - 9] >= 0;
          cr_expect((nx_f32_bits(cs[c]) != 0xff800000u) == live, "row %lld head %lld column %lld", row, h, c);
        }
      }
    }
  cr_expect(!memcmp(f.trace.output, f.t_out[0].data, tensor_bytes(&f.t_out[0])), "output payload is not Y");
  fx4_free(&f);
}
