/*
** index_share_rows.h: the fast IndexShare attention rows (index_share_rows in
** index_share.cu): their tiles of heads, shared memory and loads.  The
** phases are index_share_row_scores.h and index_share_row_values.h.
** CUDA C++, included by index_share.cu only (after index_share_abi.h,
** numerics.h and index_share_access.h).
*/
#ifndef INDEX_SHARE_ROWS_H
#define INDEX_SHARE_ROWS_H

/* ---- attention rows ---------------------------------------------------------------------- */

/*
** A block takes a tile: up to HT heads (IS_ROW_HEADS at most) of one (b, qi)
** that share a kv head and an index row, so each gathered key and value row
** is read from memory once for all of them.  The launcher picks HT
** (tile_heads, 1 or IS_ROW_HEADS; index_share_abi.h says when).  Every
** floating sum is one thread's chain in the oracle's order (the top
** comment); the phases only decide which thread owns which chain and how
** its operands reach it:
**
**   scores  warp w owns the key groups g = w, w + 8, ... of 32 keys; lane l
**           owns key 32g + l and all HT heads' chains for it.  The warp
**           stages its keys' rows 128 bytes at a time through a private
**           shared buffer (coalesced loads in, one row per lane out) and
**           fetches the next slice into registers while it computes this
**           one, so no block barrier is needed.  q * sqrt_scale is staged
**           once per tile (IS_QS_FLOATS at a time; a longer head size keeps
**           the partial chains in the scores row between passes).
**   max     order-free: per lane, warp shuffles, then across warps.
**   exps    in parallel into the scores row and a shared buffer; lane h of
**           warp 0 adds head h's exps in column order from shared memory.
**   probs   in parallel, e_s * inv, into the scores row (the payload).
**   values  thread d owns y[h][d] for every head of the tile (for half of
**           an 8-head tile's heads when the block has two threads a dim);
**           the value rows and the probabilities stream through a ring of
**           IS_VSTAGES shared stages filled by cp.async, keys in order,
**           their index words copied IS_VKEYS_AHEAD stages earlier.
**
** The block must have IS_ROW_THREADS threads; any grid works (tile stride).
**
** The lines marked IS_PLANT_* (index_share_row_scores.h,
** index_share_row_values.h) keep the text that harness/tests/
** kernel_plants.h plants bugs into (BITGATE_PLANT replaces the first match
** in its file): the score's q term, inv_sum, the y step.
*/

#define IS_ROW_WARPS (IS_ROW_THREADS / 32)
#define IS_KCHUNK_BYTES 128 /* a key row's slice per staging step: one cache line */
#define IS_KROW_UNITS 9     /* 16-byte units a staged slice takes: 8, plus 1 so that the
                               8 lanes of a 128-bit shared load hit distinct banks */
#define IS_QS_FLOATS 2048   /* q * sqrt_scale of the tile's heads, [dim][head] */
#define IS_EBUF_FLOATS 4096 /* exps a summing pass holds, all heads */
#define IS_VSTAGES 5        /* value ring depth: 4 stages in flight cover L2 latency */
#define IS_VSTAGE_BYTES 8192
#define IS_VKEYS 32 /* most keys a value stage holds */
/*
** The index words of a value stage's keys are copied into shared memory
** IS_VKEYS_AHEAD stages before its rows (index_share_row_values.h): loaded
** into registers instead, and moved along a register ring, each move waited
** for its load, and the stages' issue with it.  Slots: a stage's words are
** overwritten IS_VKEY_SLOTS stages on, past a barrier after their last use.
*/
#define IS_VKEYS_AHEAD (IS_VSTAGES - 1)
#define IS_VKEY_SLOTS 8

static_assert(IS_ROW_THREADS % 32 == 0 && IS_ROW_HEADS <= 32, "warp 0 sums a head a lane");
static_assert(IS_ROW_HEADS * IS_VKEYS <= IS_ROW_THREADS, "a probability a thread a stage");
static_assert(IS_VSTAGE_BYTES / 16 <= 2 * IS_ROW_THREADS, "two 16-byte pieces a thread a stage");
static_assert(IS_ROW_THREADS * 4 <= IS_VSTAGE_BYTES, "a stage holds a key of a pass");
static_assert(IS_EBUF_FLOATS / IS_ROW_HEADS % 8 == 0, "exp rows 4 mod 8 floats apart");
static_assert(IS_VKEY_SLOTS >= 2 * IS_VKEYS_AHEAD, "a key slot is rewritten past a barrier after its last read");
static_assert(IS_QS_FLOATS / IS_ROW_HEADS % 64 == 0, "q passes end on whole key slices");

/* The kernel's parameter block (index_share_abi.h), which every phase reads. */
typedef is_row_params is_row_args;
static_assert(sizeof(is_row_args) == IS_ROW_PARAMS_BYTES, "the launcher lays the parameter block out alike");

/* Head h of a tile is q head h0 + h, output row row0 + h * q_seq; bh its (b, kv head). */
struct is_row_tile {
  long long b, qi, h0, row0, irow, bh, valid;
  int nh;
};

/*
** One (b, kv head)'s K or V rows in their two parts (is_row_params): row key
** is lo's row key below split, else hi's row key - split.  Addresses as
** integers: hi is where hi's row -split would start (never dereferenced),
** so that a row is one choice of base and one multiply-add.  Computing both
** rows' addresses and choosing one had cost the rows kernels 5% more
** instructions and, under ncu, 9% (one-head tiles, B = 1) to 20% (B = 64)
** more time (docs/SPEED.md, eleventh round).  Both are at the same byte of
** a row (a pass's first dim).
*/
struct is_kv_slab {
  unsigned long long lo, hi;
  int split, pitch;
};

static __device__ __forceinline__ is_kv_slab is_slab_of(const is_row_args &a, const void *lo, const void *hi,
                                                        long long bh, int pitch) {
  is_kv_slab s;
  s.split = (int)a.lo_seq;
  s.pitch = pitch;
  s.lo = (unsigned long long)lo + (unsigned long long)(bh * a.lo_seq * pitch);
  s.hi = (unsigned long long)hi + (unsigned long long)((bh * (a.cache_seq - a.lo_seq) - a.lo_seq) * pitch);
  return s;
}

/* The slab moved on by bytes within its rows (to a later dim). */
static __device__ __forceinline__ is_kv_slab is_slab_at(is_kv_slab s, int bytes) {
  s.lo += (unsigned long long)bytes;
  s.hi += (unsigned long long)bytes;
  return s;
}

static __device__ __forceinline__ const unsigned char *is_slab_row(const is_kv_slab &s, int key) {
  const unsigned long long base = key < s.split ? s.lo : s.hi;
  return (const unsigned char *)(base + (unsigned long long)((long long)key * s.pitch));
}

/* One block's shared memory; the phases of a tile reuse the union in turn. */
struct is_row_shared {
  union {
    struct {
      uint4 k[IS_ROW_WARPS][32 * IS_KROW_UNITS];
      float4 q[IS_QS_FLOATS / 4];
    } score;
    float4 e[IS_EBUF_FLOATS / 4];
    struct {
      uint4 v[IS_VSTAGES][IS_VSTAGE_BYTES / 16];
      float4 p[IS_VSTAGES][IS_VKEYS * IS_ROW_HEADS / 4];
      long long keys[IS_VKEY_SLOTS][IS_VKEYS]; /* raw index words, i32 or i64 */
    } value;
  } u;
  float wmax[IS_ROW_WARPS][IS_ROW_HEADS];
  float m[IS_ROW_HEADS], inv[IS_ROW_HEADS];
  int masked[IS_ROW_HEADS];
  unsigned long long first_pad;
};

/* At file scope so that every helper knows it is shared memory. */
static __shared__ is_row_shared is_sh;

/* Element bytes EB: 4 for f32, 2 for f16 and bf16 (told apart at run time). */
template <int EB> struct is_elem {
  static constexpr int per_unit = 16 / EB; /* elements in 16 bytes */
};

/* q values loaded together: whole float4s of the [dim][head] layout. */
template <int HT> struct is_qbatch {
  static constexpr int dims = HT >= 4 ? 1 : 4 / HT;
  static constexpr int vecs = dims * HT / 4;
};

/* f16 widening is long and off the benchmarked (bf16) path: one copy, called. */
static __device__ __noinline__ float is_f16_widen(nx_u32 bits) {
  return nx_f16_to_f32((nx_u16)bits);
}

/*
** The widening helpers take the 16-bit kind as a template argument (F16:
** f16, else bf16; ignored for EB 4): the phases' inner loops are compiled
** once for each kind, so that a bf16 loop holds no branch
** (a run-time test around the f16 call split every element's load from
** the next, and the values pass waited out each load in turn).  A call
** site picks the loop with `EB == 2 && f16`, false whenever EB is 4.
*/
template <int EB, bool F16> static __device__ __forceinline__ float is_widen_at(const unsigned char *p) {
  if constexpr (EB == 4)
    return nx_f32_from_bits(*(const nx_u32 *)p);
  else if constexpr (F16)
    return is_f16_widen(*(const nx_u16 *)p);
  else
    return nx_bf16_to_f32(*(const nx_u16 *)p);
}

/* The elements of 16 bytes in memory order (little-endian halves). */
template <int EB, bool F16>
static __device__ __forceinline__ void is_widen_unit(uint4 r, float (&f)[16 / EB]) {
  const nx_u32 w[4] = {r.x, r.y, r.z, r.w};
  if constexpr (EB == 4) {
#pragma unroll
    for (int i = 0; i < 4; i++) f[i] = nx_f32_from_bits(w[i]);
  } else if constexpr (F16) {
#pragma unroll
    for (int i = 0; i < 4; i++) f[2 * i] = is_f16_widen(w[i] & 0xffffu), f[2 * i + 1] = is_f16_widen(w[i] >> 16);
  } else {
#pragma unroll
    for (int i = 0; i < 4; i++)
      f[2 * i] = nx_bf16_to_f32((nx_u16)(w[i] & 0xffffu)), f[2 * i + 1] = nx_bf16_to_f32((nx_u16)(w[i] >> 16));
  }
}

template <int EB>
static __device__ __forceinline__ void is_copy_elem(unsigned char *dst, const unsigned char *src) {
  if constexpr (EB == 4)
    *(nx_u32 *)dst = *(const nx_u32 *)src;
  else
    *(nx_u16 *)dst = *(const nx_u16 *)src;
}

static __device__ __forceinline__ void is_cp16(void *dst, const void *src) {
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
}

static __device__ __forceinline__ void is_cp4(void *dst, const void *src) {
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(d), "l"(src) : "memory");
}

static __device__ __forceinline__ void is_cp8(void *dst, const void *src) {
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(d), "l"(src) : "memory");
}

static __device__ __forceinline__ void is_cp_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <int N> static __device__ __forceinline__ void is_cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

static __device__ __forceinline__ long long is_row_tiles(const is_row_args &a, int ht) {
  return is_row_tile_count(a.batch, a.q_heads, a.kv_heads, a.group, a.q_seq, ht);
}

/* Tiles run (b, kv head, head chunk, query) with the query fastest, so that
** neighbouring blocks gather the same rows while they are in L2. */
static __device__ __forceinline__ is_row_tile is_row_tile_at(const is_row_args &a, int ht, long long i) {
  is_row_tile t;
  long long kvh, ih;
  t.qi = i % a.q_seq;
  if (ht == 1) {
    const long long bq = i / a.q_seq;
    t.h0 = bq % a.q_heads;
    t.b = bq / a.q_heads;
    t.nh = 1;
    kvh = t.h0 / a.group;
    ih = a.index_heads == 1 ? 0 : t.h0;
  } else {
    const long long chunks = (a.group + ht - 1) / ht, r = i / a.q_seq;
    const long long c = r % chunks, bk = r / chunks;
    kvh = bk % a.kv_heads;
    t.b = bk / a.kv_heads;
    t.h0 = kvh * a.group + c * ht;
    t.nh = (int)is_min_ll(ht, a.group - c * ht);
    ih = 0;
  }
  t.row0 = (t.b * a.q_heads + t.h0) * a.q_seq + t.qi;
  t.irow = ((t.b * a.index_heads + ih) * a.q_seq + t.qi) * a.width;
  t.bh = t.b * a.kv_heads + kvh;
  t.valid = 0;
  return t;
}

/* The clamped key of selection s, or row 0 (in bounds) past the selections.
** int: a present of 2^31 rows would not fit a device. */
static __device__ __forceinline__ int is_lane_key(const is_row_args &a, const is_row_tile &t,
                                                  long long s) {
  return s < t.valid ? (int)is_key_at(a.indices, t.irow + s, a.index_is_i64, a.cache_seq) : 0;
}

static __device__ __forceinline__ void is_row_zero_y(const is_row_args &a, const is_row_tile &t) {
  for (int h = 0; h < t.nh; h++)
    for (long long d = threadIdx.x; d < a.head_size; d += IS_ROW_THREADS)
      is_store(a.y, (t.row0 + h * a.q_seq) * a.head_size + d, 0.0f, a.storage);
}

#endif /* INDEX_SHARE_ROWS_H */
