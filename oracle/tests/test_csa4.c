/*
** test_csa4.c: unit tests of the CSA ratio-4 oracle's math (oracle/SPEC.md,
** "CompressedSparseAttention, ratio 4", R2-R7).  test_csa4_contracts.c has
** the contract, the cursor, the payload layouts and the 5-vs-6 outputs.
**
** Expected values are worked out here, apart from the oracle (the
** references of test_csa4_fixture.c), or by hand for inputs small enough to
** follow: the 8-candidate pool with its two source halves, the carry after
** a record, the bytes of an FP4 index record, the finalized query, the
** scorer's relu and weight scale, and the selection's tie order.
*/
#include "oracle/tests/test_csa4_fixture.h"

#include "oracle/numerics/numerics.h"

#include <stdint.h>
#include <string.h>

/* ---- compression: the pool, the carry, the records ----------------------- */

/* The stream under test: the main KV (D = 512) or the index key (D = 128). */
typedef struct stream_case {
  int index, dim, width;
  const char *name;
} stream_case;

static const stream_case streams[2] = {{0, D, 1024, "main"}, {1, ID, 256, "index"}};

/*
** The pooled value of dim d when candidate j (0..7) is token tok[j] (-1:
** an empty slot); candidates 0..3 read source dim d, 4..7 dim D + d.
*/
static float ref_pool(const stream_case *st, const long long *tok, int d) {
  float score[8], kv[8], m = NEG_INF, num = 0.0f, den = 0.0f;
  int j;
  for (j = 0; j < 8; j++) {
    int src = j < 4 ? d : st->dim + d;
    score[j] = tok[j] < 0 ? NEG_INF : tok_gate(tok[j], src) + ape_value((int)(tok[j] & 3), src);
    kv[j] = tok[j] < 0 ? 0.0f : tok_kv(tok[j], src);
    if (score[j] > m) m = score[j];
  }
  for (j = 0; j < 8; j++) {
    float w;
    if (score[j] == NEG_INF) continue;
    w = ref_exp(score[j] - m);
    den = den + w;
    num = num + w * kv[j];
  }
  return ref_bf16(num / den);
}

/* The whole record: pool, norm, then the stream's rotation at block_start. */
static void ref_record(const stream_case *st, const long long *tok, long long block_start, float *rec) {
  int d;
  for (d = 0; d < st->dim; d++) rec[d] = ref_pool(st, tok, d);
  ref_norm(rec, st->dim);
  if (st->index) ref_index_rotate(rec, block_start);
  else ref_rope(rec + 448, block_start);
}

/*
** A prefill of 8 tokens from position 0 makes two records.  Record 0:
** slots 0..3 are empty (reset at start 0), 4..7 are tokens 0..3 read at
** dims D..2D-1.  Record 1: slots 0..3 are tokens 0..3 again, now read at
** dims 0..D-1 (the overlap), and 4..7 tokens 4..7; its RoPE is at 4.
*/
Test(csa4, pool_over_eight_candidates_and_overlap_halves) {
  static const long long tok0[8] = {-1, -1, -1, -1, 0, 1, 2, 3}, tok1[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  int k;
  for (k = 0; k < 2; k++) {
    const stream_case *st = &streams[k];
    geometry4 g = geo4(1, 8, 1, 1, 4, 8);
    fixture4 f;
    float want[D];
    const float *got;
    int d;
    fx4_init(&f, &g);
    fx4_fill_tokens(&f, st->index);
    fx4_run_ok(&f, __LINE__);
    got = st->index ? f.trace.index_records : f.trace.records;
    ref_record(st, tok0, 0, want);
    for (d = 0; d < st->dim; d++) expect_bits_at(st->name, d, got[d], want[d], __LINE__);
    ref_record(st, tok1, 4, want);
    for (d = 0; d < st->dim; d++) expect_bits_at(st->name, st->dim + d, got[st->dim + d], want[d], __LINE__);
    /* the halves matter: reading dims d for candidates 4..7 would give another record */
    {
      const long long same_half[8] = {-1, -1, -1, -1, 0, 1, 2, 3};
      stream_case wrong = *st;
      wrong.dim = 0; /* candidates 4..7 read dim 0 + d */
      cr_expect(ref_pool(&wrong, same_half, 1) != ref_pool(st, same_half, 1), "%s: the test cannot tell halves",
                st->name);
    }
    fx4_free(&f);
  }
}

/* The carry after a prefill of S from 0: slots 0..3 the last full block, then the open block, then reset. */
Test(csa4, carry_rotates_after_a_record_and_resets) {
  static const struct {
    long long S;
    int line;
  } rows[] = {{3, __LINE__}, {4, __LINE__}, {6, __LINE__}, {9, __LINE__}};
  size_t r;
  int k;
  for (k = 0; k < 2; k++)
    for (r = 0; r < sizeof rows / sizeof rows[0]; r++) {
      const stream_case *st = &streams[k];
      geometry4 g = geo4(1, rows[r].S, 1, 1, 2, rows[r].S);
      long long full = rows[r].S / 4 * 4; /* tokens [full - 4, full) are the previous block */
      fixture4 f;
      const float *carry;
      int slot, i;
      fx4_init(&f, &g);
      fx4_fill_tokens(&f, st->index);
      fx4_run_ok(&f, rows[r].line);
      carry = f32p(&f.t_out[st->index ? CSA_OUT_PRESENT_INDEX_CARRY : CSA_OUT_PRESENT_CARRY]);
      for (slot = 0; slot < 8; slot++) {
        long long tok = slot < 4 ? full - 4 + slot : full + slot - 4;
        int live = slot < 4 ? full >= 4 : tok < rows[r].S;
        for (i = 0; i < st->width; i += 7) {
          float kv = live ? tok_kv(tok, i) : 0.0f;
          float sc = live ? tok_gate(tok, i) + ape_value((int)(tok & 3), i) : NEG_INF;
          expect_bits_at("carry kv", slot, carry[(slot * 2) * st->width + i], kv, rows[r].line);
          expect_bits_at("carry score", slot, carry[(slot * 2 + 1) * st->width + i], sc, rows[r].line);
        }
      }
      fx4_free(&f);
    }
}

/* start == 0 ignores the past carry; start > 0 pools it. */
Test(csa4, past_carry_is_reset_only_at_start_zero) {
  geometry4 g = geo4(1, 4, 1, 1, 2, 4);
  fixture4 clean, junk, cont;
  long long i, n;
  fx4_init(&clean, &g);
  fx4_fill_tokens(&clean, 0);
  fx4_run_ok(&clean, __LINE__);
  fx4_init(&junk, &g);
  fx4_fill_tokens(&junk, 0);
  n = tensor_numel(&junk.t_in[CSA_IN_PAST_CARRY]);
  for (i = 0; i < n; i++) f32p(&junk.t_in[CSA_IN_PAST_CARRY])[i] = 50.0f;
  fx4_run_ok(&junk, __LINE__);
  cr_expect(!memcmp(junk.t_out[1].data, clean.t_out[1].data, tensor_bytes(&clean.t_out[1])), "past carry leaked");
  g = geo4(1, 4, 1, 1, 2, 8); /* start 4: the same tokens' block now pools the junk slots 0..3 */
  fx4_init(&cont, &g);
  fx4_fill_tokens(&cont, 0);
  for (i = 0; i < n; i++) f32p(&cont.t_in[CSA_IN_PAST_CARRY])[i] = 50.0f;
  fx4_run_ok(&cont, __LINE__);
  for (i = 0; i < 448; i++) /* every dim is dominated by score 50, kv 50 of slots 0..3 */
    cr_expect(nx_f32_bits(cont.trace.records[CSA_HEAD_DIM + i]) == nx_f32_bits(cont.trace.records[CSA_HEAD_DIM]),
              "dim %lld", i);
  fx4_free(&clean);
  fx4_free(&junk);
  fx4_free(&cont);
}

/* 7 tokens, then a decode step fed the presents, equals an 8-token prefill: caches, carries, last Y. */
Test(csa4, decode_step_threads_both_states) {
  geometry4 g7 = geo4(1, 7, 2, 2, 2, 7), g1 = geo4(1, 1, 2, 2, 2, 8), g8 = geo4(1, 8, 2, 2, 2, 8);
  fixture4 a, b, ref;
  int o;
  g7.Rc = g7.Rci = g1.Rp = g1.Rpi = g1.Rc = g1.Rci = g8.Rc = g8.Rci = 3;
  fx4_init(&a, &g7);
  fx4_init(&b, &g1);
  fx4_init(&ref, &g8);
  fx4_fill_pattern(&ref, 5);
  fx4_fill_tokens(&ref, 0), fx4_fill_tokens(&ref, 1), fx4_fill_tokens(&a, 0), fx4_fill_tokens(&a, 1);
  fx4_fill_tokens(&b, 0), fx4_fill_tokens(&b, 1);
  memcpy(a.t_in[CSA_IN_CURRENT_KV].data, ref.t_in[CSA_IN_CURRENT_KV].data, tensor_bytes(&a.t_in[CSA_IN_CURRENT_KV]));
  memcpy(b.t_in[CSA_IN_CURRENT_KV].data, ref.t_in[CSA_IN_CURRENT_KV].data, tensor_bytes(&b.t_in[CSA_IN_CURRENT_KV]));
  memcpy(b.t_in[CSA_IN_QUERY].data, f32p(&ref.t_in[CSA_IN_QUERY]) + 7 * 2 * D, tensor_bytes(&b.t_in[CSA_IN_QUERY]));
  memcpy(b.t_in[CSA_IN_INDEX_QUERY].data, f32p(&ref.t_in[CSA_IN_INDEX_QUERY]) + 7 * 2 * ID,
         tensor_bytes(&b.t_in[CSA_IN_INDEX_QUERY]));
  memcpy(b.t_in[CSA_IN_INDEX_WEIGHT].data, f32p(&ref.t_in[CSA_IN_INDEX_WEIGHT]) + 7 * 2, 2 * sizeof(float));
  memcpy(b.t_in[CSA_IN_HEAD_SINK].data, ref.t_in[CSA_IN_HEAD_SINK].data, 2 * sizeof(float));
  memcpy(a.t_in[CSA_IN_HEAD_SINK].data, ref.t_in[CSA_IN_HEAD_SINK].data, 2 * sizeof(float));
  fx4_run_ok(&a, __LINE__);
  fx4_run_ok(&ref, __LINE__);
  memcpy(b.t_in[CSA_IN_PAST_COMPRESSED_KV].data, a.t_out[1].data, tensor_bytes(&a.t_out[1]));
  memcpy(b.t_in[CSA_IN_PAST_CARRY].data, a.t_out[2].data, tensor_bytes(&a.t_out[2]));
  memcpy(b.t_in[CSA_IN_PAST_INDEX_KEY].data, a.t_out[3].data, tensor_bytes(&a.t_out[3]));
  memcpy(b.t_in[CSA_IN_PAST_INDEX_CARRY].data, a.t_out[4].data, tensor_bytes(&a.t_out[4]));
  fx4_run_ok(&b, __LINE__);
  for (o = 1; o <= 4; o++)
    cr_expect(!memcmp(b.t_out[o].data, ref.t_out[o].data, tensor_bytes(&b.t_out[o])), "output %d differs", o);
  cr_expect(!memcmp(b.t_out[0].data, f32p(&ref.t_out[0]) + 7 * 2 * D, 2 * D * sizeof(float)), "last Y differs");
  cr_expect(!memcmp(b.t_out[5].data, (int *)ref.t_out[5].data + 7 * 2, 2 * sizeof(int)), "selection differs");
  fx4_free(&a);
  fx4_free(&b);
  fx4_free(&ref);
}

/* The 583-byte main record is the FP8 encoding of the traced record (read back by hand). */
Test(csa4, main_record_bytes_decode_to_the_traced_record) {
  geometry4 g = geo4(1, 8, 1, 1, 2, 8);
  fixture4 f;
  int r, d;
  fx4_init(&f, &g);
  fx4_fill_tokens(&f, 0);
  fx4_run_ok(&f, __LINE__);
  for (r = 0; r < 2; r++) {
    const unsigned char *rec = u8p(&f.t_out[1]) + r * CSA_FP8_RECORD_BYTES;
    for (d = 448; d < D; d++) expect_bits_at("tail", d, ref_fp8_value(rec, d), f.trace.records[r * D + d], __LINE__);
    for (d = 0; d < 448; d++) { /* within the block's E4M3 step: 2^-3 relative plus the scale's subnormal floor */
      float got = ref_fp8_value(rec, d), want = f.trace.records[r * D + d];
      cr_expect(fabsf(got - want) <= fabsf(want) * 0x1p-4f + 0x1p-20f, "record %d dim %d: %a vs %a", r, d,
                (double)got, (double)want);
    }
  }
  fx4_free(&f);
}

/* ---- the index key record and the query ---------------------------------- */

/*
** Tokens 0..3 with index kv (-1)^d on the second half, gate 0, ape 0: the
** pool is (-1)^d, RMSNorm keeps it (bf16 of 1/sqrt(1 + 1e-6) is 1), RoPE at
** 0 is the identity, the Hadamard transform gives 128 at dim 1 and 0
** elsewhere, times 1/sqrt(128) that is bf16 11.3125.  FP4: block 0 has scale
** 2^1 (byte 128) and 11.3125 / 2 = 5.65625 -> 6 (code 7) in the HIGH nibble
** of byte 1; blocks 1..3 are zero (amax floor: scale byte 1).
*/
Test(csa4, index_record_bytes_by_hand) {
  geometry4 g = geo4(1, 4, 1, 1, 2, 4);
  fixture4 f;
  unsigned char want[68];
  long long s;
  int d;
  fx4_init(&f, &g);
  for (s = 0; s < 4; s++)
    for (d = 0; d < ID; d++) f32p(&f.t_in[CSA_IN_INDEX_KV])[s * 256 + ID + d] = (d & 1) ? -1.0f : 1.0f;
  fx4_run_ok(&f, __LINE__);
  for (d = 0; d < ID; d++)
    expect_bits_at("index record", d, f.trace.index_records[d], d == 1 ? 11.3125f : 0.0f, __LINE__);
  memset(want, 0, sizeof want);
  want[0] = 128, want[1] = 0x70, want[17] = want[34] = want[51] = 1;
  for (d = 0; d < 68; d++)
    cr_expect(u8p(&f.t_out[CSA_OUT_PRESENT_INDEX_KEY])[d] == want[d], "byte %d: 0x%02x, want 0x%02x", d,
              u8p(&f.t_out[CSA_OUT_PRESENT_INDEX_KEY])[d], want[d]);
  fx4_free(&f);
}

/* The same pattern as an index query at position 0 finalizes to 12 at dim 1 (6 * 2), sign kept. */
Test(csa4, index_query_round_trip_by_hand) {
  geometry4 g = geo4(1, 1, 1, 2, 1, 1);
  fixture4 f;
  int d, h;
  fx4_init(&f, &g);
  for (h = 0; h < 2; h++)
    for (d = 0; d < ID; d++)
      f32p(&f.t_in[CSA_IN_INDEX_QUERY])[h * ID + d] = ((d & 1) ? -1.0f : 1.0f) * (h ? -1.0f : 1.0f);
  fx4_run_ok(&f, __LINE__);
  for (h = 0; h < 2; h++)
    for (d = 0; d < ID; d++)
      expect_bits_at("query", h * ID + d, f.trace.index_query[h * ID + d], d == 1 ? (h ? -12.0f : 12.0f) : 0.0f,
                     __LINE__);
  fx4_free(&f);
}

/* Any data at positions 5..7: bf16, RoPE at the query's position, Hadamard, scale, FP4 round trip. */
Test(csa4, index_query_finalize_matches_reference) {
  geometry4 g = geo4(2, 3, 1, 3, 2, 8);
  fixture4 f;
  long long b, s, h;
  int d, k;
  fx4_init(&f, &g);
  fx4_fill_pattern(&f, 11);
  for (d = 0; d < 2 * 3 * 3 * ID; d++) f32p(&f.t_in[CSA_IN_INDEX_QUERY])[d] *= 40.0f; /* exercise several scales */
  fx4_run_ok(&f, __LINE__);
  for (b = 0; b < 2; b++)
    for (s = 0; s < 3; s++)
      for (h = 0; h < 3; h++) {
        long long row = ((b * 3 + s) * 3 + h) * ID;
        float q[ID];
        for (d = 0; d < ID; d++) q[d] = ref_bf16(f32p(&f.t_in[CSA_IN_INDEX_QUERY])[row + d]);
        ref_index_rotate(q, 5 + s);
        for (k = 0; k < 4; k++) ref_fp4_roundtrip(q + 32 * k);
        for (d = 0; d < ID; d++) expect_bits_at("query", row + d, f.trace.index_query[row + d], q[d], __LINE__);
      }
  fx4_free(&f);
}
