/*
** test_csa4_select.c: the ratio-4 indexer's scoring and selection and the
** sparse attention over the selection (oracle/SPEC.md R5-R7), on caches
** whose records are written here byte by byte.
**
** Decode steps from a crafted past: the index key records and the main
** records are set by hand, and the index query is c * e0, which finalizes
** to c * 0.09375 in every dim (the Hadamard transform of e0 is all ones;
** bf16(1/sqrt(128)) = 0.08837890625; FP4 scale 2^-6 and 5.65625 -> 6), so
** every dot product below is an exact sum of dyadic rationals.
*/
#include "oracle/tests/test_csa4_fixture.h"

#include "oracle/numerics/numerics.h"

#include <stdint.h>
#include <string.h>

/* Index key record r of batch 0: scale byte 127 (1.0) in every block, then codes[d] at dim d. */
static void set_index_record(fixture4 *f, int r, const unsigned char *codes) {
  unsigned char *rec = u8p(&f->t_in[CSA_IN_PAST_INDEX_KEY]) + r * CSA4_INDEX_RECORD_BYTES;
  int d;
  memset(rec, 0, CSA4_INDEX_RECORD_BYTES);
  for (d = 0; d < 4; d++) rec[17 * d] = 127;
  for (d = 0; d < ID; d++) rec[17 * (d / 32) + 1 + (d % 32) / 2] |= (unsigned char)(codes[d] << ((d & 1) * 4));
}

static float weight_scale(int ih) { return (1.0f / sqrtf(128.0f)) / sqrtf((float)ih); }

/*
** Position 9 (total 10): records 0 and 1 are causal.  Head 0 has q = 0.09375
** everywhere, head 1 q = -0.09375, so head 1's dots are negative and relu
** drops them.  Record 0 = 1.0 at dims 0..3 (sum 4); record 1 = 2, 2, -0.5
** at dims 0..2 and 1.5 * 2 at dim 70 (block 2 has scale byte 128).
*/
Test(csa4, scoring_relu_weight_and_scale_by_hand) {
  geometry4 g = geo4(1, 1, 1, 2, 4, 10);
  fixture4 f;
  unsigned char codes[ID];
  float dot0, want, ws = weight_scale(2);
  int d, r;
  fx4_init(&f, &g);
  memset(codes, 0, sizeof codes);
  codes[0] = codes[1] = codes[2] = codes[3] = 2; /* 1.0 */
  set_index_record(&f, 0, codes);
  memset(codes, 0, sizeof codes);
  codes[0] = codes[1] = 4, codes[2] = 0x9, codes[70] = 3; /* 2, 2, -0.5, 1.5 */
  set_index_record(&f, 1, codes);
  u8p(&f.t_in[CSA_IN_PAST_INDEX_KEY])[CSA4_INDEX_RECORD_BYTES + 34] = 128; /* record 1, block 2: scale 2 */
  f32p(&f.t_in[CSA_IN_INDEX_QUERY])[0] = 1.0f;
  f32p(&f.t_in[CSA_IN_INDEX_QUERY])[ID] = -1.0f;
  f32p(&f.t_in[CSA_IN_INDEX_WEIGHT])[0] = 0.75f;
  f32p(&f.t_in[CSA_IN_INDEX_WEIGHT])[1] = 5.0f;
  fx4_run_ok(&f, __LINE__);
  for (d = 0; d < ID; d++) {
    expect_bits_at("query head 0", d, f.trace.index_query[d], 0.09375f, __LINE__);
    expect_bits_at("query head 1", d, f.trace.index_query[ID + d], -0.09375f, __LINE__);
  }
  for (r = 0; r < 2; r++) {
    dot0 = r == 0 ? 0.375f : 0.609375f;
    want = (0.0f + (dot0 * 0.75f) * ws) + (0.0f * 5.0f) * ws;
    expect_bits_at("index score", r, f.trace.index_scores[r], want, __LINE__);
    /* without the relu head 1 would subtract */
    cr_expect(nx_f32_bits(want) != nx_f32_bits((0.0f + (dot0 * 0.75f) * ws) + ((-dot0) * 5.0f) * ws));
  }
  expect_bits_at("index score past the limit", 2, f.trace.index_scores[2], NEG_INF, __LINE__);
  cr_expect(f.trace.selection[0] == 1 && f.trace.selection[1] == 0 && f.trace.selection[2] == -1 &&
                f.trace.selection[3] == -1,
            "selection %d %d %d %d", f.trace.selection[0], f.trace.selection[1], f.trace.selection[2],
            f.trace.selection[3]);
  fx4_free(&f);
}

/*
** Position 21 (total 22): records 0..4 causal, with key sums 1, 4, 2, 4, 0:
** records 1 and 3 tie exactly.  Selection: 1, 3, 2, 0, 4, then -1.  Main
** record r holds 1.0 at dim 0 and r + 1 at dim 448, so with q = e0 + e448
** and scale 1 its attention score is r + 2.
*/
static void selection_fixture(fixture4 *f, long long topk, int with_bias) {
  static const int sums[5] = {1, 4, 2, 4, 0};
  geometry4 g = geo4(1, 1, 1, 1, topk, 22);
  unsigned char codes[ID];
  int r, d;
  if (with_bias) g.bias_rank = 4, g.bias_shape[0] = g.bias_shape[1] = g.bias_shape[2] = 1, g.bias_shape[3] = 128 + topk;
  fx4_init(f, &g);
  for (r = 0; r < 5; r++) {
    unsigned char *main = u8p(&f->t_in[CSA_IN_PAST_COMPRESSED_KV]) + r * CSA_FP8_RECORD_BYTES;
    float tail = (float)(r + 1);
    uint32_t bits;
    memset(codes, 0, sizeof codes);
    for (d = 0; d < sums[r]; d++) codes[d] = 2;
    set_index_record(f, r, codes);
    for (d = 0; d < 7; d++) main[65 * d] = 127;
    main[1] = 0x38; /* E4M3 1.0 */
    memcpy(&bits, &tail, 4);
    main[455] = (unsigned char)(bits >> 16), main[456] = (unsigned char)(bits >> 24);
  }
  f32p(&f->t_in[CSA_IN_INDEX_QUERY])[0] = 1.0f;
  f32p(&f->t_in[CSA_IN_INDEX_WEIGHT])[0] = 1.0f;
  f32p(&f->t_in[CSA_IN_QUERY])[0] = 1.0f;
  f32p(&f->t_in[CSA_IN_QUERY])[448] = 1.0f;
  f->a.has_scale = 1, f->a.scale = 1.0f;
}

Test(csa4, selection_ties_go_to_the_lower_record_and_pad_with_minus_one) {
  static const struct {
    long long topk;
    int want[8], line;
  } rows[] = {{8, {1, 3, 2, 0, 4, -1, -1, -1}, __LINE__}, {2, {1, 3}, __LINE__}, {1, {1}, __LINE__}};
  size_t k;
  for (k = 0; k < sizeof rows / sizeof rows[0]; k++) {
    fixture4 f;
    long long i;
    selection_fixture(&f, rows[k].topk, 0);
    fx4_run_ok(&f, rows[k].line);
    expect_bits_at("tie", 1, f.trace.index_scores[1], f.trace.index_scores[3], rows[k].line);
    for (i = 0; i < rows[k].topk; i++) {
      cr_expect(f.trace.selection[i] == rows[k].want[i], "line %d: slot %lld: %d, want %d", rows[k].line, i,
                f.trace.selection[i], rows[k].want[i]);
      cr_expect(((int *)f.t_out[CSA_OUT_SELECTED].data)[i] == rows[k].want[i], "line %d: output 5 slot %lld",
                rows[k].line, i);
    }
    fx4_free(&f);
  }
}

/*
** The attention over that selection: dense columns 0..21 (positions 0..21,
** current_kv zero: score 0), 22..127 -inf; column 128 + k is selected record
** sel[k] with score sel[k] + 2, plus the bias of column 128 + k (10 on
** column 131, record 0); padding columns -inf.  Y by hand from those scores.
*/
Test(csa4, attention_over_the_selection_by_hand) {
  static const int sel[8] = {1, 3, 2, 0, 4, -1, -1, -1};
  fixture4 f;
  float want[136], m = NEG_INF, den = 0.0f, y0 = 0.0f, y448 = 0.0f;
  int c, d;
  selection_fixture(&f, 8, 1);
  f32p(&f.t_in[CSA_IN_BIAS])[131] = 10.0f;
  fx4_run_ok(&f, __LINE__);
  for (c = 0; c < 136; c++) {
    want[c] = c < 22 ? 0.0f : NEG_INF;
    if (c >= 128 && sel[c - 128] >= 0) want[c] = (float)(sel[c - 128] + 2) + (c == 131 ? 10.0f : 0.0f);
    expect_bits_at("candidate score", c, f.trace.scores[c], want[c], __LINE__);
    if (want[c] > m) m = want[c];
  }
  for (c = 0; c < 136; c++)
    if (want[c] != NEG_INF) den = den + ref_exp(want[c] - m);
  den = den + ref_exp(0.0f - m); /* sink 0 */
  for (c = 0; c < 136; c++) {
    float p;
    if (want[c] == NEG_INF) continue;
    p = ref_exp(want[c] - m) / den;
    y0 = y0 + p * (c < 128 ? 0.0f : 1.0f);
    y448 = y448 + p * (c < 128 ? 0.0f : (float)(sel[c - 128] + 1));
  }
  expect_bits_at("Y", 0, f32p(&f.t_out[0])[0], y0, __LINE__);
  expect_bits_at("Y", 448, f32p(&f.t_out[0])[448], y448, __LINE__);
  for (d = 1; d < D; d++)
    if (d != 448) expect_bits_at("Y", d, f32p(&f.t_out[0])[d], 0.0f, __LINE__);
  /* both caches: records 0..4 are the past's bytes, record 5 (past the cursor) is zero bytes */
  cr_expect(!memcmp(f.t_out[1].data, f.t_in[CSA_IN_PAST_COMPRESSED_KV].data, 5 * CSA_FP8_RECORD_BYTES));
  cr_expect(!memcmp(f.t_out[3].data, f.t_in[CSA_IN_PAST_INDEX_KEY].data, 5 * CSA4_INDEX_RECORD_BYTES));
  for (d = 0; d < CSA_FP8_RECORD_BYTES; d++) cr_expect(u8p(&f.t_out[1])[5 * CSA_FP8_RECORD_BYTES + d] == 0);
  for (d = 0; d < CSA4_INDEX_RECORD_BYTES; d++) cr_expect(u8p(&f.t_out[3])[5 * CSA4_INDEX_RECORD_BYTES + d] == 0);
  fx4_free(&f);
}
