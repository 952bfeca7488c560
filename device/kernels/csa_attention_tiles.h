/*
** csa_attention_tiles.h: the fast CSA sink attention of both compression
** ratios (csa4.cu, csa128.cu) as four passes over every (b, s) row group,
** whose heads share one candidate list.  CUDA C++, included after
** numerics.h, nx_csa.h, csa_kernel_common.h and csa_sink_attention.h, whose
** row description (csa_attention_row), candidate geometry (csa_candidate)
** and record decoding it uses; a ratio hands in a RowAt functor that fills
** the csa_attention_row of output row (b, s, h) = bs * heads + h, its
** gathered pointer included.
**
**   csa_attn_gather   a warp a candidate row: every candidate c < count of
**                     a (b, s) row decoded once into f32, [stride, 512] a
**                     row group (zeros for a candidate that is not live),
**                     the rows the next two passes read.  Rows from count
**                     to the stride are not written and never read.  Not
**                     launched where the scores pass takes its narrow
**                     tiles, which decode their rows and write them here
**                     themselves.
**   scores            tiles of heads x CSA_TILE_CANDS candidates (a lane
**                     each): score = (sum over d ascending of q[d] *
**                     k_c[d]) * scale, + bias; -inf where c is not live,
**                     up to the row's stride (the CandidateAssembly
**                     payload).  Each score is one thread's chain, d
**                     ascending.  One chain a thread (csa_attn_scores_one,
**                     below), the narrow tiles of four, whose rows the
**                     tile decodes itself (csa_attn_scores_resident,
**                     csa_attention_resident.h), or the wide ones of
**                     eight (csa_attn_scores<T>, csa_attention_chains.h).
**   csa_attn_softmax  a block per output row: m = max (nx_maxf, reduced
**                     across the block: order-free), w_c = nx_expf(score -
**                     m) a thread each, den = the w_c summed over c
**                     ascending by thread 0 from shared memory (a round
**                     of 224 while the other warps take the next round's
**                     exps, or CSA_SOFTMAX_BATCH at a time for a long
**                     row), + nx_expf(sink - m),
**                     p_c = w_c / den in parallel (nx_expf is a chain
**                     of some 25 double operations: a warp per row left
**                     640 of them to 32 lanes).  m == -inf makes every weight
**                     -inf, which the last pass reads as "no candidate":
**                     y = +0, as the oracle's zero row.  -inf marks a dead
**                     candidate (no exp or probability is -inf).
**   values            tiles of heads x dims: y[d] = sum over c ascending of
**                     p_c * v_c[d] skipping p_c == -inf, each y[d] one
**                     thread's chain.  One chain a thread
**                     (csa_attn_values_narrow, below) or the wide tiles of
**                     16 (csa_attn_values<T>, csa_attention_chains.h).
**
** Why a gather pass: the tiles of one (b, s) row share its candidates, and
** 8 head tiles of scores and 8 of values each decoded every row they read
** (an FP8 code and a scale byte a float, or a bf16 tail): 60% of the two
** passes' instructions (docs/SPEED.md, sixth round).  Decoded once, a
** stage is a few 16-byte loads a thread.
**
** Why these shapes: at a decode step with B = 1 there are only 64 rows, so
** the work must spread over candidates and dims to reach the 132 SMs, and
** every chain is long (512 or 640 terms): it is fed from shared memory with
** wide loads, one barrier per staged chunk, never from global memory.  With
** more (b, s) row groups the scores and values passes take wider tiles
** (more chains a thread); the launchers choose by csa_attn_wide_scores,
** csa_attn_narrow_scores and csa_attn_wide_values (csa_attention_abi.h).
**
** These are the oracle's formulas (oracle/SPEC.md C3 and R7) and the
** reference kernels' (csa_sink_attention_reference.h), term for term.
*/
#ifndef CSA_ATTENTION_TILES_H
#define CSA_ATTENTION_TILES_H

#include "csa_attention_abi.h"
#include "csa_attention_staging.h"
#include "ordered_sum.h"

#define CSA_TILE_WARPS (CSA_TILE_THREADS / 32)
#define CSA_GATHER_RUNS (CSA_ATTN_DIM / 32)                                   /* runs of 32 dims a row: 16 */
#define CSA_NARROW_VALUE_LOADS (CSA_NARROW_VALUE_CHUNK * CSA_NARROW_VALUE_DIMS / 4 / CSA_TILE_THREADS) /* float4s: 8 */
#define CSA_SOFTMAX_BATCH 1024 /* exps summed from shared memory at once */
#define CSA_SOFTMAX_HELD (CSA_SOFTMAX_BATCH / CSA_TILE_THREADS)

/*
** A pass's launch bounds (the kernel macros of csa4.cu and csa128.cu):
** CSA_TILE_MIN_BLOCKS blocks of CSA_TILE_THREADS a SM, so at most 128
** registers a thread, but one block a SM for the narrow scores pass.  That
** pass runs only where the (b, s) row groups are few (B = 1: 80 blocks, one
** a SM), and at the 128-register cap ptxas moved each of its stage's
** shared-memory loads down to the instruction that uses it, so every four
** dims waited out a load (SASS; docs/SPEED.md, thirtieth round).
*/
#define CSA_TILE_BOUNDS (CSA_TILE_THREADS, CSA_TILE_MIN_BLOCKS)
#define CSA_RESIDENT_BOUNDS (CSA_RESIDENT_THREADS, 1)

/* Where the fast passes find the (b, s) row group of output row `row`: gathered [bs_rows, stride, 512]. */
static __device__ __forceinline__ void csa_attn_locate_gathered(csa_attention_row *r, float *gathered,
                                                                long long row, long long heads) {
  r->gathered = gathered + csa_div_ll(row, heads) * r->stride * CSA_ATTN_DIM;
}

/*
** Pass 0.  Units (bs, run of CSA_GATHER_ROWS candidates), block-stride;
** warp w decodes candidate c0 + w, lane l its dims l, l + 32, ...: every
** fetch of the row is issued before any is decoded (csa_fetch, then
** csa_fetched_value), each store a coalesced 128-byte run.
*/
template <class RowAt>
static __device__ void csa_attn_gather(const RowAt &row_at, const csa_cursor *cur, long long bs_rows,
                                       long long heads, long long stride) {
  __shared__ csa_decode_tables dt;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const long long runs = (stride + CSA_GATHER_ROWS - 1) / CSA_GATHER_ROWS;
  long long unit;
  csa_decode_tables_fill(&dt);
  __syncthreads();
  for (unit = blockIdx.x; unit < csa_attn_gather_units(bs_rows, stride); unit += gridDim.x) {
    const long long bs = csa_div_ll(unit, runs), c = (unit - bs * runs) * CSA_GATHER_ROWS + warp;
    csa_attention_row r;
    csa_fetched f[CSA_GATHER_RUNS];
    const void *row;
    unsigned char kind;
    float *out;
    int k;
    row_at(bs * heads, &r);
    if (c >= r.count) continue; /* warp-uniform */
    csa_cand_entry(&row, &kind, 0, &r, cur, c, csa_candidate_record(&r, c));
#pragma unroll
    for (k = 0; k < CSA_GATHER_RUNS; k++) f[k] = csa_fetch(row, kind, 32 * k, lane);
    out = r.gathered + c * CSA_ATTN_DIM + lane;
#pragma unroll
    for (k = 0; k < CSA_GATHER_RUNS; k++) out[32 * k] = csa_fetched_value(&dt, kind, 32 * k, f[k]);
  }
}

/*
** The pipelined softmax of a row whose stride is at most
** CSA_SOFTMAX_PIPE_MAX (B = 1: 640): warp 0 sums, the other warps (the
** producers, thread p of them) hold the scores of candidates p + 224 j
** and take their exps a round j at a time, candidate order within the
** round, each round staged to batch and released on named barrier 1 + j.
** Thread 0 adds a round while the producers take the next one's exps, so
** the exps of every round but the first are off the sum's chain (docs/
** SPEED.md, thirty-third round).
*/
#define CSA_SOFTMAX_PRODUCERS (CSA_TILE_THREADS - 32)
#define CSA_SOFTMAX_PIPE_HELD 4
#define CSA_SOFTMAX_PIPE_MAX (CSA_SOFTMAX_PRODUCERS * CSA_SOFTMAX_PIPE_HELD)
static_assert(CSA_SOFTMAX_PIPE_MAX <= CSA_SOFTMAX_BATCH && CSA_SOFTMAX_PIPE_HELD < 16, "one batch, named barriers 1..");
static_assert(CSA_SOFTMAX_PRODUCERS % 4 == 0, "each round 16-byte aligned in batch");

/* Producer p's scores (-inf past the stride): its candidates p + CSA_SOFTMAX_PRODUCERS j. */
static __device__ __forceinline__ float csa_softmax_pipe_load(const csa_attention_row *r, int p, float *held) {
  float m = csa_neg_inf();
  int j;
#pragma unroll
  for (j = 0; j < CSA_SOFTMAX_PIPE_HELD; j++) {
    const long long c = p + CSA_SOFTMAX_PRODUCERS * j;
    held[j] = c < r->stride ? r->scores[c] : csa_neg_inf();
    m = nx_maxf(m, held[j]);
  }
  return m;
}

/*
** The row's exps, den (published in *den) and probabilities, m its max
** (not -inf).  The weights as csa_attn_softmax's batches leave them: p_c
** for a live c < count, w_c (-inf: dead) elsewhere up to the stride.
*/
static __device__ __forceinline__ void csa_softmax_pipe_row(const csa_attention_row *r, float m, float *held,
                                                            float *batch, float *den) {
  const int tid = threadIdx.x, rounds = (int)((r->stride + CSA_SOFTMAX_PRODUCERS - 1) / CSA_SOFTMAX_PRODUCERS);
  int j;
  if (tid < 32) {
    const float sink_w = nx_expf(r->sink - m); /* while the producers take the first round */
    float sum = 0.0f;
    for (j = 0; j < rounds; j++) {
      const int n = (int)csa_min_ll(CSA_SOFTMAX_PRODUCERS, csa_max_ll(r->count - CSA_SOFTMAX_PRODUCERS * j, 0));
      csa_bar_sync(1 + j, CSA_TILE_THREADS);
      if (tid == 0) sum = ordered_sum_run(batch + CSA_SOFTMAX_PRODUCERS * j, n, sum); /* c ascending */
    }
    if (tid == 0) *den = sum + sink_w;
  } else {
    const int p = tid - 32;
#pragma unroll
    for (j = 0; j < CSA_SOFTMAX_PIPE_HELD; j++) {
      const long long c = p + CSA_SOFTMAX_PRODUCERS * j;
      float e = 0.0f; /* a dead candidate adds +0: see csa_attn_softmax */
      if (j >= rounds) break; /* block-uniform */
      if (c < r->stride && !nx_csa_is_neg_inf(held[j])) held[j] = nx_expf(held[j] - m), e = held[j];
      batch[c] = e;
      csa_bar_arrive(1 + j, CSA_TILE_THREADS);
    }
  }
  __syncthreads(); /* den */
  if (tid >= 32) {
    const int p = tid - 32;
#pragma unroll
    for (j = 0; j < CSA_SOFTMAX_PIPE_HELD; j++) {
      const long long c = p + CSA_SOFTMAX_PRODUCERS * j;
      if (c >= r->stride) break;
      r->weights[c] = c < r->count && !nx_csa_is_neg_inf(held[j]) ? held[j] / *den : held[j];
    }
  }
}

/*
** A longer row's exps, CSA_SOFTMAX_BATCH at a time, each batch summed by
** thread 0 from shared memory in candidate order while the sink's exp is
** taken by another warp; then the probabilities, each thread rereading
** only the weights it wrote.
*/
static __device__ __forceinline__ void csa_softmax_batched_row(const csa_attention_row *r, float m, float *batch,
                                                               float *den, float *sink_w) {
  const int tid = threadIdx.x;
  float sum = 0.0f; /* thread 0's */
  long long c0, c;
  int j;
  if (tid == 32) *sink_w = nx_expf(r->sink - m); /* read after the batches' barriers */
  for (c0 = 0; c0 < r->stride; c0 += CSA_SOFTMAX_BATCH) {
    const int n = (int)csa_min_ll(CSA_SOFTMAX_BATCH, csa_max_ll(r->count - c0, 0));
#pragma unroll
    for (j = 0; j < CSA_SOFTMAX_HELD; j++) {
      float e = 0.0f;
      c = c0 + tid + j * CSA_TILE_THREADS;
      if (c < r->stride) {
        float w = r->scores[c];
        if (!nx_csa_is_neg_inf(w)) w = nx_expf(w - m), e = w;
        r->weights[c] = w;
      }
      batch[tid + j * CSA_TILE_THREADS] = e;
    }
    __syncthreads();
    if (tid == 0) sum = ordered_sum_run(batch, n, sum); /* candidates c0 .. c0 + n - 1, ascending */
    __syncthreads(); /* batch is read */
  }
  if (tid == 0) *den = sum + *sink_w;
  __syncthreads();
  for (c = tid; c < r->count; c += CSA_TILE_THREADS) {
    const float w = r->weights[c];
    if (!nx_csa_is_neg_inf(w)) r->weights[c] = w / *den;
  }
}

/*
** Pass 2.  A block per output row, block-stride: the max reduced across the
** block (order-free), then the exps, their sum and the probabilities: a
** row of at most CSA_SOFTMAX_PIPE_MAX candidates pipelined
** (csa_softmax_pipe_row), a longer one in batches (csa_softmax_batched_row).
** A dead candidate enters the sum as +0 rather than being skipped: the sum
** starts at +0 and every exp is >= +0 (or NaN), so it is never -0, and
** adding +0 leaves it as it is.
*/
template <class RowAt>
static __device__ void csa_attn_softmax(const RowAt &row_at, long long rows) {
  __shared__ float wmax[CSA_TILE_WARPS];
  __shared__ __align__(16) float batch[CSA_SOFTMAX_BATCH];
  __shared__ float den, sink_w;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  long long row;
  for (row = blockIdx.x; row < rows; row += gridDim.x) {
    csa_attention_row r;
    float m = csa_neg_inf(), held[CSA_SOFTMAX_PIPE_HELD];
    long long c;
    int off, i, pipelined;
    row_at(row, &r);
    csa_chain_wait();
    pipelined = r.stride <= CSA_SOFTMAX_PIPE_MAX; /* block-uniform */
    if (pipelined) {
      if (tid >= 32) m = csa_softmax_pipe_load(&r, tid - 32, held);
    } else {
      for (c = tid; c < r.stride; c += CSA_TILE_THREADS) m = nx_maxf(m, r.scores[c]);
    }
    for (off = 16; off > 0; off /= 2) m = nx_maxf(m, __shfl_xor_sync(0xffffffffu, m, off));
    __syncthreads(); /* the previous row is done with wmax, batch and den */
    if (lane == 0) wmax[warp] = m;
    __syncthreads();
    for (i = 0; i < CSA_TILE_WARPS; i++) m = nx_maxf(m, wmax[i]);
    if (nx_csa_is_neg_inf(m)) { /* no live candidate: every weight "dead", y = +0 (block-uniform) */
      for (c = tid; c < r.stride; c += CSA_TILE_THREADS) r.weights[c] = csa_neg_inf();
      continue;
    }
    if (pipelined) csa_softmax_pipe_row(&r, m, held, batch, &den);
    else csa_softmax_batched_row(&r, m, batch, &den, &sink_w);
  }
}

#include "csa_attention_chains.h" /* the wide scores and values passes */
#include "csa_attention_resident.h" /* the narrow scores pass */

/*
** The one-chain scores pass (a tile of CSA_ONE_SCORE_HEADS heads, a warp
** each, x CSA_TILE_CANDS candidates) keeps its own form, apart from
** the others, for the launches whose narrow tiles would be too few
** (csa_attn_narrow_scores): its chain loads its next eight terms while it
** adds, which a thread of one chain needs.  A narrow tile needs fewer
** shared-memory reads a score but gives a short row a quarter as many
** tiles: at ratio 128, position 4,096 (stride 160) 20 tiles, and the
** attention went 20.0 -> 23.5 us (with the template's narrow tile).
*/
#define CSA_ONE_K 256 /* dims of q and k staged at once */
#define CSA_ONE_KEY_LOADS (CSA_TILE_CANDS * CSA_ONE_K / 4 / CSA_TILE_THREADS)          /* float4s of keys a thread: 8 */
#define CSA_ONE_QUERY_LOADS (CSA_ONE_SCORE_HEADS * CSA_ONE_K / 4 / CSA_TILE_THREADS)   /* of the query: 2 */

/*
** Pass 1's loads of dims d0 .. d0 + CSA_ONE_K - 1: float4 i of thread t is
** number t + CSA_TILE_THREADS * i of the stage, row-major (keys: candidate
** rows c0.., zeros past count; query: heads h0.., zeros past heads).
*/
static __device__ __forceinline__ void csa_load_keys(float4 *kf, const csa_attention_row *r, long long c0,
                                                     int d0) {
  const int per_row = CSA_ONE_K / 4;
  int i;
#pragma unroll
  for (i = 0; i < CSA_ONE_KEY_LOADS; i++) {
    const int f = (int)threadIdx.x + CSA_TILE_THREADS * i, t = f / per_row;
    const float4 *src = (const float4 *)(r->gathered + (c0 + t) * CSA_ATTN_DIM + d0) + f % per_row;
    kf[i] = c0 + t < r->count ? __ldg(src) : csa_zero4();
  }
}

static __device__ __forceinline__ void csa_load_query(float4 *qf, const csa_attention_row *r, long long heads,
                                                      long long h0, int d0) {
  const int per_row = CSA_ONE_K / 4;
  int i;
#pragma unroll
  for (i = 0; i < CSA_ONE_QUERY_LOADS; i++) {
    const int f = (int)threadIdx.x + CSA_TILE_THREADS * i, j = f / per_row;
    const float4 *src = (const float4 *)(r->query + j * CSA_ATTN_DIM + d0) + f % per_row;
    qf[i] = h0 + j < heads ? __ldg(src) : csa_zero4();
  }
}

/*
** acc + q[0] * k[0] + q[1] * k[1] + ... over CSA_ONE_K dims, in that order
** (each product rounded, then added), q and k 16-byte aligned: the next
** eight dims are loaded while the last eight are added, so that the chain
** waits on its adds, not on shared-memory loads.
*/
static __device__ __forceinline__ float csa_dot_in_order(const float *q, const float *k, float acc) {
  float4 qa = *(const float4 *)q, qb = *(const float4 *)(q + 4);
  float4 ka = *(const float4 *)k, kb = *(const float4 *)(k + 4);
  int i;
#pragma unroll 4
  for (i = 8; i <= CSA_ONE_K; i += 8) {
    const int next = i < CSA_ONE_K ? i : 0; /* the last step reloads dims 0..7, unused */
    const float4 nqa = *(const float4 *)(q + next), nqb = *(const float4 *)(q + next + 4);
    const float4 nka = *(const float4 *)(k + next), nkb = *(const float4 *)(k + next + 4);
    acc = csa_dot4(csa_dot4(acc, qa, ka), qb, kb);
    qa = nqa, qb = nqb, ka = nka, kb = nkb;
  }
  return acc;
}

/*
** Pass 1, one-chain tiles (CSA_ONE_SCORE_HEADS heads, a warp each).  Units
** (bs, head tile, candidate tile), block-stride; warp w
** scores candidate c0 + lane for head h0 + w.  The second chunk of dims is
** loaded while the first is multiplied.
*/
template <class RowAt>
static __device__ void csa_attn_scores_one(const RowAt &row_at, const csa_cursor *cur, long long bs_rows,
                                       long long heads, long long stride) {
  __shared__ __align__(16) float qs[CSA_ONE_SCORE_HEADS][CSA_ONE_K + 4];
  __shared__ __align__(16) float ks[CSA_TILE_CANDS][CSA_ONE_K + 4];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, per_row = CSA_ONE_K / 4;
  const long long htiles = (heads + CSA_ONE_SCORE_HEADS - 1) / CSA_ONE_SCORE_HEADS;
  const long long ctiles = (stride + CSA_TILE_CANDS - 1) / CSA_TILE_CANDS;
  long long unit;
  for (unit = blockIdx.x; unit < csa_attn_score_units(bs_rows, heads, stride, CSA_ONE_SCORE_HEADS); unit += gridDim.x) {
    const long long q = csa_div_ll(unit, ctiles), bs = csa_div_ll(q, htiles);
    const long long h0 = (q - bs * htiles) * CSA_ONE_SCORE_HEADS, c0 = (unit - q * ctiles) * CSA_TILE_CANDS;
    const long long c = c0 + lane, h = h0 + warp;
    csa_attention_row r;
    const float *kv;
    const nx_u8 *rec;
    float acc = 0.0f, score = csa_neg_inf();
    int live, d0, i;
    row_at(bs * heads + h0, &r);
    live = csa_candidate(&r, cur, c, &kv, &rec);
    csa_chain_wait();
    __syncthreads(); /* the previous unit is done with qs and ks */
    if (c0 < r.count) { /* else the tile is wholly past the candidates, all -inf (block-uniform) */
      float4 kf[CSA_ONE_KEY_LOADS], qf[CSA_ONE_QUERY_LOADS];
      csa_load_keys(kf, &r, c0, 0);
      csa_load_query(qf, &r, heads, h0, 0);
#pragma unroll
      for (d0 = 0; d0 < CSA_ATTN_DIM; d0 += CSA_ONE_K) {
        if (d0) __syncthreads(); /* the previous chunk is read */
#pragma unroll
        for (i = 0; i < CSA_ONE_KEY_LOADS; i++) {
          const int f = (int)threadIdx.x + CSA_TILE_THREADS * i;
          *(float4 *)&ks[f / per_row][4 * (f % per_row)] = kf[i];
        }
#pragma unroll
        for (i = 0; i < CSA_ONE_QUERY_LOADS; i++) {
          const int f = (int)threadIdx.x + CSA_TILE_THREADS * i;
          *(float4 *)&qs[f / per_row][4 * (f % per_row)] = qf[i];
        }
        __syncthreads();
        if (d0 + CSA_ONE_K < CSA_ATTN_DIM) {
          csa_load_keys(kf, &r, c0, d0 + CSA_ONE_K);
          csa_load_query(qf, &r, heads, h0, d0 + CSA_ONE_K);
        }
        if (h < heads) acc = csa_dot_in_order(qs[warp], ks[lane], acc);
      }
    }
    if (h >= heads || c >= stride) continue;
    if (live) { /* row h's scale and bias are row h0's; only the head differs */
      score = acc * r.scale;
      if (r.bias) score = score + csa_bias_at(r.bias, r.bias_dims, r.b, h, r.s, c);
    }
    r.scores[warp * stride + c] = score;
  }
}


/*
** The narrow values pass (two chains a thread on half the warps) keeps its
** own form, apart from csa_attention_chains.h's template: its chains must
** load their next terms while they add, or they wait out every
** shared-memory load; the template's form of this tile (8 warps of a head, a
** dim a lane) ran 17.3 us at B = 1 against this pass's 10.8 then
** (docs/SPEED.md, seventh round).
*/
#define CSA_NV_DIMS CSA_NARROW_VALUE_DIMS /* the stride of a lane's column of staged values */

/*
** Two heads' chains over a lane's column v of the staged values (p0 and p1
** their probabilities, 16-byte aligned), each over the n candidates in
** order: a value read once serves both heads.  The terms come in blocks of
** CSA_PAIR_BLOCK, each unrolled whole.  Why: in a rolled loop that carries
** its next terms in registers, ptxas issued every load of an iteration at
** its end, so the next iteration's first adds waited out the loads just
** issued, and two heads a thread ran no faster than one (SASS,
** docs/SPEED.md, thirty-sixth round).  In a straight block it issues each
** load about 24 instructions before its use (thirty-seventh round).
*/
#define CSA_PAIR_BLOCK 64

static __device__ __forceinline__ void csa_weighted_pair_in_order(const float *p0, const float *p1, const float *v,
                                                                  int n, float *acc0, float *acc1) {
  float a0 = *acc0, a1 = *acc1;
  int i = 0;
#pragma unroll 1
  for (; i + CSA_PAIR_BLOCK <= n; i += CSA_PAIR_BLOCK) {
    int k;
#pragma unroll
    for (k = 0; k < CSA_PAIR_BLOCK; k += 4) {
      const float4 pa = *(const float4 *)(p0 + i + k), pb = *(const float4 *)(p1 + i + k);
      const float x0 = v[(i + k) * CSA_NV_DIMS], x1 = v[(i + k + 1) * CSA_NV_DIMS];
      const float x2 = v[(i + k + 2) * CSA_NV_DIMS], x3 = v[(i + k + 3) * CSA_NV_DIMS];
      a0 = a0 + pa.x * x0, a1 = a1 + pb.x * x0; /* the two heads a term at a time: 0.1-0.5 us faster */
      a0 = a0 + pa.y * x1, a1 = a1 + pb.y * x1; /* than four terms of one head, then the other's */
      a0 = a0 + pa.z * x2, a1 = a1 + pb.z * x2;
      a0 = a0 + pa.w * x3, a1 = a1 + pb.w * x3;
    }
  }
  for (; i < n; i++) {
    const float x = v[i * CSA_NV_DIMS];
    a0 = a0 + p0[i] * x, a1 = a1 + p1[i] * x;
  }
  *acc0 = a0, *acc1 = a1;
}

/*
** The narrow values pass's loads of candidates c0 .. c0 +
** CSA_NARROW_VALUE_CHUNK - 1: thread t's probability of each head (-inf
** past count or heads), and float4 i of the chunk's values is number t +
** CSA_TILE_THREADS * i, row-major over the tile's dims (zeros past count).
*/
static __device__ __forceinline__ void csa_narrow_values_load(float *pf, float4 *vf, const csa_attention_row *r,
                                                              long long heads, long long h0, long long c0,
                                                              int d0) {
  const int per_row = CSA_NARROW_VALUE_DIMS / 4;
  const long long c = c0 + threadIdx.x;
  int j, i;
#pragma unroll
  for (j = 0; j < CSA_NARROW_VALUE_HEADS; j++)
    pf[j] = h0 + j < heads && c < r->count ? r->weights[j * r->stride + c] : csa_neg_inf();
#pragma unroll
  for (i = 0; i < CSA_NARROW_VALUE_LOADS; i++) {
    const int f = (int)threadIdx.x + CSA_TILE_THREADS * i, t = f / per_row;
    const float4 *src = (const float4 *)(r->gathered + (c0 + t) * CSA_ATTN_DIM + d0) + f % per_row;
    vf[i] = c0 + t < r->count ? __ldg(src) : csa_zero4();
  }
}

/*
** Pass 3, narrow tiles (CSA_NARROW_VALUE_HEADS heads x CSA_NARROW_VALUE_DIMS
** dims).  Units (bs, head tile, dim tile), block-stride; every warp loads
** and stages, and warp w < 4 then runs the chains of heads h0 + 2w and h0 +
** 2w + 1, lane l dim d0 + l: a staged value read once serves two heads, so
** the SM's shared-memory pipe carries 8 wavefronts a term where one head a
** warp took 12 (docs/SPEED.md, thirty-sixth and thirty-seventh rounds).
** Software-pipelined over chunks of candidates: while chunk k is
** multiplied, chunk k + 1's probabilities and values are in flight.  A
** chunk in which no head of the tile has a dead candidate runs its chains
** without the test; the staging barrier tells (__syncthreads_or).
*/
template <class RowAt>
static __device__ void csa_attn_values_narrow(const RowAt &row_at, long long bs_rows, long long heads) {
  __shared__ __align__(16) float ps[CSA_NARROW_VALUE_HEADS][CSA_NARROW_VALUE_CHUNK];
  __shared__ __align__(16) float vs[CSA_NARROW_VALUE_CHUNK][CSA_NARROW_VALUE_DIMS];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, per_row = CSA_NARROW_VALUE_DIMS / 4;
  const long long htiles = (heads + CSA_NARROW_VALUE_HEADS - 1) / CSA_NARROW_VALUE_HEADS;
  const long long dtiles = CSA_ATTN_DIM / CSA_NARROW_VALUE_DIMS;
  long long unit;
  static_assert(CSA_NARROW_VALUE_CHUNK == CSA_TILE_THREADS, "a thread loads one candidate's probabilities");
  static_assert(CSA_NARROW_VALUE_HEADS == CSA_TILE_WARPS, "two heads a chain warp, half the warps");
  for (unit = blockIdx.x; unit < bs_rows * htiles * dtiles; unit += gridDim.x) {
    const long long q = csa_div_ll(unit, dtiles), bs = csa_div_ll(q, htiles);
    const long long h0 = (q - bs * htiles) * CSA_NARROW_VALUE_HEADS, h = h0 + 2 * warp;
    const int chains = warp < CSA_TILE_WARPS / 2 && h < heads; /* warp-uniform; warps 4..7 only stage */
    const int d0 = (int)(unit - q * dtiles) * CSA_NARROW_VALUE_DIMS;
    csa_attention_row r;
    float acc0 = 0.0f, acc1 = 0.0f, pf[CSA_NARROW_VALUE_HEADS];
    float4 vf[CSA_NARROW_VALUE_LOADS];
    long long c0;
    int i, j;
    row_at(bs * heads + h0, &r);
    csa_chain_wait();
    csa_narrow_values_load(pf, vf, &r, heads, h0, 0, d0);
    for (c0 = 0; c0 < r.count; c0 += CSA_NARROW_VALUE_CHUNK) {
      const int n = (int)csa_min_ll(CSA_NARROW_VALUE_CHUNK, r.count - c0);
      int dead = 0, any_dead;
      __syncthreads(); /* the previous chunk's (or unit's) ps and vs are read */
#pragma unroll
      for (j = 0; j < CSA_NARROW_VALUE_HEADS; j++) {
        ps[j][tid] = pf[j];
        dead |= h0 + j < heads && tid < n && nx_csa_is_neg_inf(pf[j]);
      }
#pragma unroll
      for (i = 0; i < CSA_NARROW_VALUE_LOADS; i++) {
        const int f = tid + CSA_TILE_THREADS * i;
        *(float4 *)&vs[f / per_row][4 * (f % per_row)] = vf[i];
      }
      any_dead = __syncthreads_or(dead); /* ps and vs are filled; a dead candidate of any head of the chunk */
      if (c0 + CSA_NARROW_VALUE_CHUNK < r.count)
        csa_narrow_values_load(pf, vf, &r, heads, h0, c0 + CSA_NARROW_VALUE_CHUNK, d0);
      if (chains) {
        const float *p0 = ps[2 * warp], *p1 = ps[2 * warp + 1];
        if (any_dead) {
          for (i = 0; i < n; i++) {
            const float x = vs[i][lane];
            if (!nx_csa_is_neg_inf(p0[i])) acc0 = acc0 + p0[i] * x;
            if (!nx_csa_is_neg_inf(p1[i])) acc1 = acc1 + p1[i] * x;
          }
        } else { /* a head past heads (h + 1 == heads) runs on -inf and is never stored */
          csa_weighted_pair_in_order(p0, p1, &vs[0][lane], n, &acc0, &acc1);
        }
      }
    }
    if (chains) r.y[(h - h0) * CSA_ATTN_DIM + d0 + lane] = acc0;
    if (chains && h + 1 < heads) r.y[(h + 1 - h0) * CSA_ATTN_DIM + d0 + lane] = acc1;
  }
}


#endif /* CSA_ATTENTION_TILES_H */
