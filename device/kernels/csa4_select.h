/*
** csa4_select.h: the ratio-4 top-k (csa4_select), included by csa4.cu after
** its cursor helpers.  selection [B, S, topk] <- a row's first min(limit,
** topk) records in nx_csa_rank_before order, then -1.  Exact: no float
** arithmetic, only the order of nx_csa_rank_key, whose keys are distinct (the
** record is in them).
**
** A thread-block cluster of CSA4_SELECT_CLUSTER blocks takes one (b, s) row
** (cluster-stride), so a long row's passes run on that many SMs: block q
** reads records (j * CLUSTER + q) * THREADS + tid, j = 0, 1, ... (coalesced,
** and spread evenly however long the row).
**
**   1. threshold (only when limit > topk): a most-significant-digit radix
**      select over the keys, 8 bits a pass.  Each block counts its records'
**      digits into its own histogram (one shared atomic per distinct digit
**      a warp; a count does not depend on the order of the adds); after a
**      cluster barrier every block adds up the cluster's histograms itself
**      and picks the same digit, so no block waits on another's choice.  A
**      pass ends the search early when every key sharing the prefix found
**      so far is wanted: the prefix padded with zero bits then takes
**      exactly those.  Exactly k keys are >= the threshold.
**   2. gather: each block appends its keys >= the threshold to rank 0's
**      list (one distributed-shared-memory atomic a warp, any order).
**   3. rank: every block copies the k keys and counts, for each key, the
**      keys above it: that count is its slot.  Block q's thread t counts
**      key (q * THREADS + t) / 8 against an eighth of the list and the
**      eight partial counts meet by shuffles.  A count is order-free, so
**      the slots are the sorted order whatever the gather's order.
*/
#ifndef CSA4_SELECT_H
#define CSA4_SELECT_H

#define CSA4_RADIX_DIGITS 256
#define CSA4_SELECT_BATCH 8 /* scores a selecting thread loads at once */
#define CSA4_SELECT_SPAN (CSA4_SELECT_CLUSTER * CSA4_SELECT_THREADS) /* records a cluster reads per j */
#define CSA4_RANK_SLICES 8  /* threads that share one key's count */
#define CSA4_RANK_SLICE (CSA4_TOPK_MAX_K / CSA4_RANK_SLICES)
#define CSA4_RANK_PAD(j) ((j) + (j) / CSA4_RANK_SLICE) /* the slices start in different banks */

static_assert(CSA4_SELECT_SPAN == CSA4_TOPK_MAX_K * CSA4_RANK_SLICES,
              "the cluster's threads count every key of a full selection once per slice");
static_assert(CSA4_RADIX_DIGITS <= CSA4_SELECT_THREADS, "a thread a digit when the histograms are added");

typedef struct csa4_select_shared {
  unsigned hist[2][CSA4_RADIX_DIGITS]; /* this block's counts, by pass parity */
  unsigned total[CSA4_RADIX_DIGITS];   /* the cluster's counts of this pass */
  nx_u64 key[CSA4_TOPK_MAX_K];         /* rank 0's: the gathered keys, any order */
  nx_u64 ranked[CSA4_RANK_PAD(CSA4_TOPK_MAX_K)]; /* every block's copy of them, padded */
  nx_u64 prefix;
  long long want;
  unsigned n_chosen; /* rank 0's: keys gathered so far */
  int done;
} csa4_select_shared;

static __device__ __forceinline__ void csa4_cluster_sync(void) {
  __cluster_barrier_arrive(); /* release: this block's shared writes are seen by the cluster after the wait */
  __cluster_barrier_wait();
}

/* Warp 0: the digit of sh->total holding the want-th largest key; sets sh->prefix, want and done. */
static __device__ void csa4_pick_digit(csa4_select_shared *sh, nx_u64 prefix, long long want, int shift) {
  const int lane = threadIdx.x % 32, per_lane = CSA4_RADIX_DIGITS / 32;
  long long mine = 0, above, here;
  int u, off;
  for (u = 0; u < per_lane; u++) mine += sh->total[lane * per_lane + u];
  here = mine; /* becomes the count of lanes >= this one */
  for (off = 1; off < 32; off *= 2) {
    const long long from = __shfl_down_sync(0xffffffffu, here, off);
    if (lane + off < 32) here += from;
  }
  above = here - mine; /* keys in higher lanes' digits */
  if (above < want && want <= here) {
    for (u = per_lane - 1; u >= 0; u--) {
      const unsigned n = sh->total[lane * per_lane + u];
      if (above + n >= want) break;
      above += n;
    }
    sh->prefix = prefix | ((nx_u64)(lane * per_lane + u) << shift);
    sh->want = want - above;
    sh->done = sh->want == (long long)sh->total[lane * per_lane + u];
  }
}

/*
** s[u] <- scores[r + u * CSA4_SELECT_SPAN] for u < CSA4_SELECT_BATCH, the
** ones at or past limit left unread: the loads of a batch are in flight
** together.
*/
static __device__ __forceinline__ void csa4_select_load(const float *scores, long long limit, long long r,
                                                        float *s) {
  int u;
#pragma unroll
  for (u = 0; u < CSA4_SELECT_BATCH; u++) {
    const long long at = r + (long long)u * CSA4_SELECT_SPAN;
    s[u] = at < limit ? scores[at] : 0.0f;
  }
}

/* Step 1: the threshold of records [0, limit) of one row.  Every thread of the cluster calls it. */
static __device__ nx_u64 csa4_threshold(const float *scores, long long limit, long long k, int rank,
                                        csa4_select_shared *sh) {
  const int tid = threadIdx.x, lane = tid % 32;
  nx_u64 prefix = 0, mask = 0;
  long long want = k, base;
  int shift, pass = 0, q;
  for (shift = 56; shift >= 0; shift -= 8, pass++) {
    unsigned *hist = sh->hist[pass % 2]; /* zero: see below */
    for (base = (long long)rank * CSA4_SELECT_THREADS + tid - lane; base < limit;
         base += CSA4_SELECT_BATCH * CSA4_SELECT_SPAN) { /* warp-uniform */
      float s[CSA4_SELECT_BATCH];
      int u;
      csa4_select_load(scores, limit, base + lane, s);
#pragma unroll
      for (u = 0; u < CSA4_SELECT_BATCH; u++) {
        const long long r = base + lane + (long long)u * CSA4_SELECT_SPAN;
        int digit = CSA4_RADIX_DIGITS; /* none */
        unsigned peers;
        if (r < limit) {
          const nx_u64 rank_key = nx_csa_rank_key(s[u], r);
          if ((rank_key & mask) == prefix) digit = (int)((rank_key >> shift) & 0xffu);
        }
        peers = __match_any_sync(0xffffffffu, digit);
        if (digit < CSA4_RADIX_DIGITS && lane == __ffs(peers) - 1) atomicAdd(&hist[digit], __popc(peers));
      }
    }
    csa4_cluster_sync(); /* every block's counts of this pass are in */
    if (tid < CSA4_RADIX_DIGITS) {
      unsigned n = 0;
      for (q = 0; q < CSA4_SELECT_CLUSTER; q++) n += ((unsigned *)__cluster_map_shared_rank(hist, q))[tid];
      sh->total[tid] = n;
      /*
      ** The other parity's counts were last read by the cluster in the
      ** previous pass, which every block finished before the barrier above:
      ** clear them for the next pass.
      */
      sh->hist[(pass + 1) % 2][tid] = 0;
    }
    __syncthreads();
    if (tid < 32) csa4_pick_digit(sh, prefix, want, shift);
    __syncthreads();
    prefix = sh->prefix;
    want = sh->want;
    mask |= (nx_u64)0xffu << shift;
    if (sh->done) break; /* cluster-uniform: every block picked from the same counts */
  }
  return prefix;
}

/*
** Step 3 for one row: this block's share of the k gathered keys' slots.
** out[slot] for slot < k is the record of the key with slot keys above it;
** out[k .. topk) <- -1.
*/
static __device__ void csa4_rank_keys(csa4_select_shared *sh, long long k, long long topk, int rank, int *out) {
  const int tid = threadIdx.x;
  const long long w = (long long)rank * CSA4_SELECT_THREADS + tid, i = w / CSA4_RANK_SLICES;
  const int slice = (int)(w % CSA4_RANK_SLICES);
  const nx_u64 *from = (const nx_u64 *)__cluster_map_shared_rank(sh->key, 0);
  unsigned above = 0;
  int j, off;
  for (j = tid; j < k; j += CSA4_SELECT_THREADS) sh->ranked[CSA4_RANK_PAD(j)] = from[j];
  __syncthreads();
  if (i < k) {
    const nx_u64 mine = sh->ranked[CSA4_RANK_PAD(i)];
    const int first = slice * CSA4_RANK_SLICE;
    const int last = (int)csa_min_ll(first + CSA4_RANK_SLICE, k);
    for (j = first; j < last; j++) above += sh->ranked[CSA4_RANK_PAD(j)] > mine;
  }
  for (off = 1; off < CSA4_RANK_SLICES; off *= 2) above += __shfl_xor_sync(0xffffffffu, above, off);
  if (slice == 0 && i < k) out[above] = (int)(0xffffffffu - (nx_u32)sh->ranked[CSA4_RANK_PAD(i)]);
  if (slice == 0 && i >= k && i < topk) out[i] = -1;
}

extern "C" __global__ void __cluster_dims__(CSA4_SELECT_CLUSTER, 1, 1) __launch_bounds__(CSA4_SELECT_THREADS)
    csa4_select(csa4_shape p, const float *scores, int *selection, const long long *total_ptr) {
  __shared__ csa4_select_shared sh;
  const int tid = threadIdx.x, lane = tid % 32, rank = (int)__clusterRelativeBlockRank();
  const long long rows = p.batch * p.seq, capacity = p.index_present_capacity;
  unsigned *n_chosen = (unsigned *)__cluster_map_shared_rank(&sh.n_chosen, 0);
  nx_u64 *chosen = (nx_u64 *)__cluster_map_shared_rank(sh.key, 0);
  csa_cursor c;
  long long row;
  if (__clusterSizeInBlocks() != CSA4_SELECT_CLUSTER) __trap(); /* the launch broke csa4_abi.h */
  if (!csa4_cursor(&c, total_ptr, &p)) return; /* grid-uniform */
  for (row = __clusterIdx().x; row < rows; row += __clusterGridDimInClusters().x) {
    const long long limit = csa4_record_limit(&p, c.start + row % p.seq);
    const long long k = csa_min_ll(limit, p.topk);
    const float *row_scores = scores + row * capacity;
    nx_u64 threshold = 0; /* every key is >= 0: all limit records when limit <= topk */
    long long base;
    /* The previous row ended with a cluster barrier: nobody reads these any more. */
    if (tid < CSA4_RADIX_DIGITS) sh.hist[0][tid] = 0, sh.hist[1][tid] = 0;
    if (tid == 0 && rank == 0) sh.n_chosen = 0;
    __syncthreads();
    if (limit > p.topk) threshold = csa4_threshold(row_scores, limit, k, rank, &sh);
    csa4_cluster_sync(); /* n_chosen is zero cluster-wide */
    for (base = (long long)rank * CSA4_SELECT_THREADS + tid - lane; base < limit;
         base += CSA4_SELECT_BATCH * CSA4_SELECT_SPAN) { /* warp-uniform */
      float s[CSA4_SELECT_BATCH];
      int u;
      csa4_select_load(row_scores, limit, base + lane, s);
#pragma unroll
      for (u = 0; u < CSA4_SELECT_BATCH; u++) {
        const long long r = base + lane + (long long)u * CSA4_SELECT_SPAN;
        const nx_u64 rank_key = nx_csa_rank_key(s[u], r);
        const unsigned takers = __ballot_sync(0xffffffffu, r < limit && rank_key >= threshold);
        unsigned at = 0;
        if (!takers) continue; /* warp-uniform */
        if (lane == __ffs(takers) - 1) at = atomicAdd(n_chosen, (unsigned)__popc(takers));
        at = __shfl_sync(0xffffffffu, at, __ffs(takers) - 1) + __popc(takers & ((1u << lane) - 1u));
        if (takers >> lane & 1u && at < CSA4_TOPK_MAX_K) chosen[at] = rank_key; /* exactly k <= topk */
      }
    }
    csa4_cluster_sync(); /* rank 0 holds the k keys */
    csa4_rank_keys(&sh, k, p.topk, rank, selection + row * p.topk);
    csa4_cluster_sync(); /* every block is done with rank 0's keys and its own shared state */
  }
}

#endif /* CSA4_SELECT_H */
