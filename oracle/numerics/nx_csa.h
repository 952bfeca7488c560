/*
** nx_csa.h: the CompressedSparseAttention stage math that the oracle
** (oracle/csa128.c, oracle/csa4*.c) and the kernels (device/kernels/csa*.cu)
** share, so that one formula has one text.  Everything is built from the
** frozen primitives of numerics.h: one IEEE binary32 operation at a time,
** rounded to nearest, nothing fused, sums from +0.0f in ascending order.
** oracle/SPEC.md ("CompressedSparseAttention") gives the seed lines.
**
** The functions are serial on purpose: a kernel that parallelises calls them
** per independent output (a dimension, a pair, a record), never splitting a
** sum.  Not included by numerics.h; include it after numerics.h.
*/
#ifndef NX_CSA_H
#define NX_CSA_H

#include "nx_base.h"

#define NX_CSA_NEG_INF_BITS 0xff800000u
#define NX_CSA_ROPE_PAIRS 32    /* the 64-dim RoPE tail as (re, im) pairs */
#define NX_CSA_FP8_RECORD 583   /* 7 x (UE8M0 + 64 E4M3), then 64 little-endian bf16 */
#define NX_CSA_NOPE 448         /* record dims 0..447 are FP8, 448..511 the bf16 tail */
#define NX_CSA_FP4_RECORD 68    /* 4 x (UE8M0 + 16 bytes of packed E2M1) */

NX_FN int nx_csa_is_neg_inf(float x) { return nx_f32_bits(x) == NX_CSA_NEG_INF_BITS; }

/*
** Per-dimension softmax pooling over n candidates (seed: the compressors'
** pool loops).  Candidate j's score is score0[j * stride] and its kv
** kv0[j * stride], shifted by `shift` floats for j >= split (ratio 4's
** overlapped window: candidates 4..7 read the second half of the source; pass
** split = n for no shift).  The max runs over every candidate (nx_maxf, from
** -inf); the two sums skip -inf scores; then bf16.  All -inf gives 0/0 = NaN.
*/
NX_FN float nx_csa_pool(const float *score0, const float *kv0, int n, long long stride, int split,
                        long long shift) {
  float m = nx_f32_from_bits(NX_CSA_NEG_INF_BITS), num = 0.0f, den = 0.0f;
  int j;
  for (j = 0; j < n; j++) m = nx_maxf(m, score0[j * stride + (j >= split ? shift : 0)]);
  for (j = 0; j < n; j++) {
    const long long at = j * stride + (j >= split ? shift : 0);
    const float score = score0[at];
    float w;
    if (nx_csa_is_neg_inf(score)) continue; /* an empty slot */
    w = nx_expf(score - m);
    den = den + w;
    num = num + w * kv0[at];
  }
  return nx_bf16_round(num / den);
}

/* 1 / sqrt(sq / dim + 1e-6): the seed's __frcp_rn(__fsqrt_rn(...)), both exact IEEE ops. */
NX_FN float nx_csa_inv_rms(float sq, int dim) {
#ifdef NX_CUDA
  return 1.0f / __fsqrt_rn(sq / (float)dim + 1e-6f);
#else
  return 1.0f / __builtin_sqrtf(sq / (float)dim + 1e-6f);
#endif
}

/* The sum of squares of x[0..n), ascending: RMSNorm's order-dependent part. */
NX_FN float nx_csa_square_sum(const float *x, int n) {
  float sq = 0.0f;
  int d;
  for (d = 0; d < n; d++) sq = sq + x[d] * x[d];
  return sq;
}

/* Element d after RMSNorm and the norm weight: bf16((x * inv_rms) * w). */
NX_FN float nx_csa_norm_value(float x, float inv_rms, float w) { return nx_bf16_round((x * inv_rms) * w); }

/*
** The RoPE frequency of pair p (0..31) of a 64-dim tail: base
** 160000^(-2p/64), blended towards base/16 by a ramp over pairs 15..25.
*/
NX_FN float nx_csa_rope_freq(int pair) {
  const float t = ((float)pair - 15.0f) / 10.0f;
  const float ramp = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
  const float base = nx_powf(160000.0f, nx_f32_neg((float)(2 * pair)) / 64.0f);
  return base * (1.0f - ramp) + (base / 16.0f) * ramp;
}

/*
** Rotates pair p of a 64-float tail (tail[2p], tail[2p+1]) by the angle
** whose sine and cosine are sn and cs, bf16 after each component: the
** rotation of nx_csa_rope_pair, for a caller that rotates many tails at one
** position and takes each pair's angle once.
*/
NX_FN void nx_csa_rope_rotate(float *tail, int pair, float sn, float cs) {
  const float re = tail[2 * pair], im = tail[2 * pair + 1];
  tail[2 * pair] = nx_bf16_round(re * cs - im * sn);
  tail[2 * pair + 1] = nx_bf16_round(re * sn + im * cs);
}

/*
** Rotates pair p of a 64-float tail by angle (float)pos * freq(p), bf16
** after each component.  pos is the caller's position (a block start for
** records, the query position for queries); (float) of an i64 rounds to
** nearest.
*/
NX_FN void nx_csa_rope_pair(float *tail, int pair, long long pos) {
  float sn, cs;
  nx_sincosf((float)pos * nx_csa_rope_freq(pair), &sn, &cs);
  nx_csa_rope_rotate(tail, pair, sn, cs);
}

/* Every pair of a 64-float tail at pos. */
NX_FN void nx_csa_rope_tail(float *tail, long long pos) {
  int p;
  for (p = 0; p < NX_CSA_ROPE_PAIRS; p++) nx_csa_rope_pair(tail, p, pos);
}

/*
** One butterfly stage of the unnormalised Walsh-Hadamard transform of
** length n: for each block of 2*span, (l, r) -> (l + r, l - r).  Element
** pairs are independent within a stage, so a kernel may split them across
** threads (one pair each, index i in 0..n/2) and get the same bits.
*/
NX_FN void nx_csa_hadamard_pair(float *x, int span, int i) {
  const int at = (i / span) * 2 * span + i % span;
  const float l = x[at], r = x[at + span];
  x[at] = l + r;
  x[at + span] = l - r;
}

/* The whole transform, spans 1, 2, 4, ... < n (n a power of two). */
NX_FN void nx_csa_hadamard(float *x, int n) {
  int span, i;
  for (span = 1; span < n; span *= 2)
    for (i = 0; i < n / 2; i++) nx_csa_hadamard_pair(x, span, i);
}

/* 1/sqrt(n): the seed's __frcp_rn(__fsqrt_rn((float)n)). */
NX_FN float nx_csa_rsqrt_exact(int n) {
#ifdef NX_CUDA
  return 1.0f / __fsqrt_rn((float)n);
#else
  return 1.0f / __builtin_sqrtf((float)n);
#endif
}

/*
** The index scorer's weight scale, (1/sqrt(ID)) / sqrt(IH), in the seed's
** two divisions (not a product of reciprocals).
*/
NX_FN float nx_csa_weight_scale(int index_dim, int index_heads) {
#ifdef NX_CUDA
  return (1.0f / __fsqrt_rn((float)index_dim)) / __fsqrt_rn((float)index_heads);
#else
  return (1.0f / __builtin_sqrtf((float)index_dim)) / __builtin_sqrtf((float)index_heads);
#endif
}

/*
** Top-k rank order: record a (score sa) comes strictly before record b
** when its score is greater under the total order on bit patterns, or equal
** with a smaller record index (DESIGN.md "Top-k ties").
*/
NX_FN int nx_csa_rank_before(float sa, long long ia, float sb, long long ib) {
  const int c = nx_f32_total_cmp(sa, sb);
  return c > 0 || (c == 0 && ia < ib);
}

/*
** The same order as one unsigned 64-bit key, for selections that count or
** radix-select: for records 0 <= ia, ib < 2^32, nx_csa_rank_before(sa, ia,
** sb, ib) iff nx_csa_rank_key(sa, ia) > nx_csa_rank_key(sb, ib).  High word:
** the total-order key of the score; low word: the complemented record, so a
** smaller record ranks first among equal scores.
*/
NX_FN nx_u64 nx_csa_rank_key(float score, long long record) {
  return ((nx_u64)nx_f32_order_key(score) << 32) | (nx_u64)(0xffffffffu - (nx_u32)record);
}

/*
** Where element d (0..511) of a 583-byte hybrid record lies: its FP8 code
** and the block's scale byte, or the bf16 tail's low and high bytes.  The
** fetch and the decode are apart so that a kernel can issue every byte load
** of a row before it decodes any of them.
*/
NX_FN void nx_csa_fp8_record_offsets(int d, int *first, int *second) {
  if (d < NX_CSA_NOPE) {
    *second = NX_FP8_BLOCK_BYTES * (d / NX_FP8_BLOCK);
    *first = *second + 1 + d % NX_FP8_BLOCK;
  } else {
    *first = (NX_CSA_NOPE / NX_FP8_BLOCK) * NX_FP8_BLOCK_BYTES + 2 * (d - NX_CSA_NOPE);
    *second = *first + 1;
  }
}

/* Element d from the two bytes at nx_csa_fp8_record_offsets: FP8 value * scale, or the widened bf16. */
NX_FN float nx_csa_fp8_record_decode(int d, nx_u8 first, nx_u8 second) {
  if (d < NX_CSA_NOPE) return nx_e4m3_decode(first) * nx_ue8m0_decode(second);
  return nx_bf16_to_f32((nx_u16)(first | (second << 8)));
}

/* Element d (0..511) of a 583-byte hybrid record. */
NX_FN float nx_csa_fp8_record_value(const nx_u8 *rec, int d) {
  int first, second;
  nx_csa_fp8_record_offsets(d, &first, &second);
  return nx_csa_fp8_record_decode(d, rec[first], rec[second]);
}

/* Tail element t (0..63) of a 583-byte record: bf16 bits, little-endian, at 455 + 2t. */
NX_FN void nx_csa_fp8_record_tail(const float *rec512, nx_u8 *out583, int t) {
  const nx_u16 bits = nx_bf16_round_bits(rec512[NX_CSA_NOPE + t]);
  out583[(NX_CSA_NOPE / NX_FP8_BLOCK) * NX_FP8_BLOCK_BYTES + 2 * t] = (nx_u8)(bits & 0xffu);
  out583[(NX_CSA_NOPE / NX_FP8_BLOCK) * NX_FP8_BLOCK_BYTES + 2 * t + 1] = (nx_u8)(bits >> 8);
}

/* The whole 583-byte record of rec512: 7 FP8 blocks, then the tail. */
NX_FN void nx_csa_fp8_record_write(const float *rec512, nx_u8 *out583) {
  int k, t;
  for (k = 0; k < NX_CSA_NOPE / NX_FP8_BLOCK; k++)
    nx_fp8_block64_quantize(rec512 + k * NX_FP8_BLOCK, out583 + k * NX_FP8_BLOCK_BYTES);
  for (t = 0; t < 64; t++) nx_csa_fp8_record_tail(rec512, out583, t);
}

/* Element d of a 68-byte FP4 index record: E2M1 value * block scale. */
NX_FN float nx_csa_fp4_record_value(const nx_u8 *rec, int d) {
  const nx_u8 *blk = rec + (1 + NX_FP4_BLOCK / 2) * (d / NX_FP4_BLOCK);
  const nx_u8 byte = blk[1 + (d % NX_FP4_BLOCK) / 2];
  return nx_e2m1_decode((nx_u8)((d & 1) ? byte >> 4 : byte & 0xfu)) * nx_ue8m0_decode(blk[0]);
}

/* The whole 68-byte FP4 index record of rec128: 4 blocks of (UE8M0 scale, 16 packed E2M1 bytes). */
NX_FN void nx_csa_fp4_record_write(const float *rec128, nx_u8 *out68) {
  int k;
  for (k = 0; k < NX_CSA_FP4_RECORD / NX_FP4_BLOCK_BYTES; k++)
    nx_fp4_block32_quantize(rec128 + k * NX_FP4_BLOCK, out68 + k * NX_FP4_BLOCK_BYTES);
}

#endif /* NX_CSA_H */
