/*
** index_share_abi.h: what index_share.cu and its launcher
** (device/index_share_device.c) must agree on: kernel names, block sizes,
** storage codes, the per-row validation record and the rule codes.
** Plain C and CUDA C++ alike; no includes.  Also the rows kernel's tile
** count, which its loop and its launcher's grid both use.
*/
#ifndef INDEX_SHARE_ABI_H
#define INDEX_SHARE_ABI_H

#define IS_KERNEL_FILE "index_share.cu"
#define IS_KERNEL_FRONTIER "index_share_frontier"
#define IS_KERNEL_PRESENT "index_share_present"
#define IS_KERNEL_PRESENT_CAPACITY "index_share_present_capacity"
#define IS_KERNEL_VALIDATE "index_share_validate_rows"
#define IS_KERNEL_ROWS "index_share_rows"         /* fast: tiles of IS_ROW_HEADS heads */
#define IS_KERNEL_ROWS_ONE "index_share_rows_one" /* fast only: one head a tile */

#define IS_FRONTIER_THREADS 256 /* one block per batch */
#define IS_COPY_THREADS 256 /* present builds: an item (16-byte unit or element) a thread */
#define IS_COPY_MAX_BLOCKS (1u << 22) /* their grid's cap; past it threads walk on by the grid's stride */
#define IS_COPY_BLOCKS_PER_SM 8       /* a full SM of them: 32 registers, each thread's load in flight */
#define IS_VALIDATE_THREADS 1024 /* a block (a grid of one a row) or a thread per index row */
#define IS_VALIDATE_BLOCK_ROWS 65536 /* most rows the launcher gives a block each */
#define IS_ROW_THREADS 256      /* one block per tile of heads (index_share.cu), tile-stride */
/*
** Most heads a rows block shares its gathered rows among; f16/bf16 only: f32
** rows run one head a tile (a third kernel body would double the module's
** compile time, and f32 is no production dtype).
*/
#define IS_ROW_HEADS 8
/*
** The launcher groups IS_ROW_HEADS heads a tile only when one-head tiles
** would exceed this many blocks, about one wave of the H200's 132 SMs: below
** it a block's serial chains set the time and more heads a block lengthen
** them; above it re-reading each gathered row once per head costs L2
** bandwidth, and blocks queue anyway.  A tuning knob, not a contract.
*/
#define IS_ROW_WAVE_TILES 132

#ifdef __CUDACC__
#define IS_ABI_FN static __host__ __device__ __forceinline__
#else
#define IS_ABI_FN static inline
#endif

/* Tiles (blocks' work units) of the fast rows kernel for tiles of ht heads: the kernel's loop and the grid. */
IS_ABI_FN long long is_row_tile_count(long long batch, long long q_heads, long long kv_heads, long long group,
                                      long long q_seq, int ht) {
  if (ht == 1) return batch * q_heads * q_seq;
  return batch * kv_heads * ((group + ht - 1) / ht) * q_seq;
}

/*
** The fast rows kernel's one parameter, a __grid_constant__ block (the
** reference kernel takes the same values one by one, tile_heads aside).
** As a constant the kernel reads its fields from the parameter bank where
** it uses them; assembled into a local struct they had sat in local
** memory, and every use in the inner loops was a load.  Only pointers,
** long long, float and int, in an order without padding holes, so that
** the C launcher and NVRTC lay it out alike (both sides check the size).
**
** K and V come in two parts along the sequence: for each (b, kv head),
** cache rows below lo_seq are rows of key_lo / value_lo [B, kv_heads,
** lo_seq, D] and the rest rows of key_hi / value_hi [B, kv_heads, cache_seq
** - lo_seq, D].  A growing present's launch passes past and current, so
** the rows gather the very rows the present copies (no copy needs to run
** first, and in production none runs: index_share_device.c); a present
** built first, or fed, is passed whole as the low part (lo_seq = cache_seq).
*/
struct is_row_params {
  const void *query, *key_lo, *key_hi, *value_lo, *value_hi, *indices, *bias;
  float *scores, *score_trace;
  void *y;
  long long bd0, bd1, bd2, bd3, batch, q_heads, kv_heads, group, q_seq, cache_seq, head_size;
  long long index_heads, width, lo_seq;
  float sqrt_scale;
  int index_is_i64, has_bias, storage, tile_heads, pad; /* pad: 0, so that the size is a multiple of 8 */
};
#define IS_ROW_PARAMS_BYTES (10 * 8 + 14 * 8 + 6 * 4)

/* Storage of every floating tensor (the contract makes them all one dtype). */
#define IS_STORAGE_F32 0
#define IS_STORAGE_F16 1
#define IS_STORAGE_BF16 2

/*
** The rule codes the validation kernel writes; equal to oracle/op_error.h's
** enum index_rule (the launcher checks this at compile time).
*/
#define IS_RULE_NONE 0
#define IS_RULE_SENTINEL 1
#define IS_RULE_AFTER_PADDING 2
#define IS_RULE_OUT_OF_RANGE 3
#define IS_RULE_DUPLICATE 4
#define IS_RULE_NOT_INCREASING 5
#define IS_RULE_ALL_PADDING 6

/*
** One record of IS_STATUS_WORDS 64-bit words per index row (row = (batch *
** index_heads + head) * q_seq + query): the rule (IS_RULE_*), the column of
** the first violation (-1 for all-padding or none), the offending value, and
** the bound it broke (out of range) or the previous value (duplicate, not
** increasing); 0 otherwise.
*/
#define IS_STATUS_WORDS 4
#define IS_STATUS_RULE 0
#define IS_STATUS_COLUMN 1
#define IS_STATUS_VALUE 2
#define IS_STATUS_AUX 3

/* The capture-error bit of a bad index row; equals INDEX_SHARE_LATCH_BIT. */
#define IS_LATCH_INDEX_BIT 512u

#endif /* INDEX_SHARE_ABI_H */
