/*
** csa_attention_abi.h: the tile geometry of the fast CSA attention passes
** (csa_attention_tiles.h, csa_attention_chains.h) and how many work units
** each pass has, which the kernels walk and the launchers (csa4_device.c,
** csa128_device.c, through csa_device_attention_plan) size their grids by.
** Plain C and CUDA C++ alike.
*/
#ifndef CSA_ATTENTION_ABI_H
#define CSA_ATTENTION_ABI_H

#define CSA_TILE_THREADS 256  /* every pass: 8 warps */
#define CSA_TILE_MIN_BLOCKS 2 /* resident 256-thread blocks a SM the passes are compiled for (CSA_ATTN_MIN_BLOCKS) */
#define CSA_TILE_CANDS 32     /* candidates a scores tile: a lane each */
#define CSA_GATHER_ROWS 8     /* candidate rows a gather block decodes: a warp each */

/* Scores tiles (heads x CSA_TILE_CANDS) and values tiles (heads x dims): one-chain, narrow, wide. */
#define CSA_ONE_SCORE_HEADS 8     /* 1 a warp, 256 threads */
/*
** The heads of the tiles csa_attn_narrow_scores counts (x CSA_TILE_CANDS),
** not those it launches (CSA_RESIDENT_*): the count is the one the earlier
** narrow tiles of this shape were chosen by, so that each gate case kept
** its tiling when the resident tiles replaced them.
*/
#define CSA_NARROW_SCORE_HEADS 16
#define CSA_NARROW_VALUE_HEADS 8  /* 1 a warp */
#define CSA_NARROW_VALUE_DIMS 32  /* 1 a lane */
#define CSA_NARROW_VALUE_CHUNK 256 /* candidates it stages at once: a thread each */
#define CSA_RESIDENT_THREADS CSA_TILE_THREADS /* the narrow scores tiles: 4 warps of chains, 4 that feed them */
#define CSA_RESIDENT_HEADS 32     /* the narrow tile's heads: 8 a warp, 4 a thread (csa_attention_resident.h) */
#define CSA_RESIDENT_CANDS 16     /* its candidates, decoded by the pass itself: a lane each, for 4 heads */
#define CSA_WIDE_SCORE_HEADS 64   /* 8 a warp */
#define CSA_WIDE_VALUE_HEADS 32   /* 4 a warp */
#define CSA_WIDE_VALUE_DIMS 128   /* 4 a lane */
/*
** A pass takes its wide tiles once they are at least this many: two for
** each of an H200's 132 SMs.  Fewer wide tiles would leave SMs idle, where
** the narrow ones (4 times as many scores tiles, 16 times as many values
** tiles) reach them.  A constant, not the device's SM count, so that a case
** runs the same kernels on every GPU.
*/
#define CSA_WIDE_MIN_UNITS 264
/*
** Below wide, the scores pass takes its narrow tiles (4 chains a thread)
** once they are at least this many, counted in tiles of
** CSA_NARROW_SCORE_HEADS x CSA_TILE_CANDS, half the SMs; fewer, and its one-chain
** tiles (twice as many) spread a short row further (ratio 128 at position
** 4,096: 20 narrow tiles ran the attention 3.5 us slower).
*/
#define CSA_NARROW_MIN_UNITS 64

/* The fast attention's passes, in launch order (bit 1 << pass of early_release). */
typedef enum csa_attn_pass {
  CSA_ATTN_GATHER,
  CSA_ATTN_SCORES,
  CSA_ATTN_SOFTMAX,
  CSA_ATTN_VALUES,
  CSA_ATTN_PASSES
} csa_attn_pass;

#ifdef __CUDACC__
#define CSA_ABI_FN static __host__ __device__ __forceinline__
#else
#define CSA_ABI_FN static inline
#endif

/* Gather: (bs, run of CSA_GATHER_ROWS candidates) over the scores row's stride. */
CSA_ABI_FN long long csa_attn_gather_units(long long bs_rows, long long stride) {
  return bs_rows * ((stride + CSA_GATHER_ROWS - 1) / CSA_GATHER_ROWS);
}

/* Scores: (bs, head tile of tile_heads, candidate tile) over the scores row's stride. */
CSA_ABI_FN long long csa_attn_score_units(long long bs_rows, long long heads, long long stride, long long tile_heads) {
  return bs_rows * ((heads + tile_heads - 1) / tile_heads) * ((stride + CSA_TILE_CANDS - 1) / CSA_TILE_CANDS);
}

/* Softmax: an output row a unit. */
CSA_ABI_FN long long csa_attn_softmax_units(long long bs_rows, long long heads) {
  return bs_rows * heads;
}

/* Values: (bs, head tile of tile_heads, dim tile of tile_dims) of the 512 output dims. */
CSA_ABI_FN long long csa_attn_value_units(long long bs_rows, long long heads, long long tile_heads,
                                          long long tile_dims) {
  return bs_rows * ((heads + tile_heads - 1) / tile_heads) * (512 / tile_dims);
}

/* Scores, narrow (resident rows): (bs, head tile of CSA_RESIDENT_HEADS, candidate tile of CSA_RESIDENT_CANDS). */
CSA_ABI_FN long long csa_attn_resident_units(long long bs_rows, long long heads, long long stride) {
  return bs_rows * ((heads + CSA_RESIDENT_HEADS - 1) / CSA_RESIDENT_HEADS) *
         ((stride + CSA_RESIDENT_CANDS - 1) / CSA_RESIDENT_CANDS);
}

/* Whether the scores / values pass runs its wide tiles (see CSA_WIDE_MIN_UNITS). */
CSA_ABI_FN int csa_attn_wide_scores(long long bs_rows, long long heads, long long stride) {
  return csa_attn_score_units(bs_rows, heads, stride, CSA_WIDE_SCORE_HEADS) >= CSA_WIDE_MIN_UNITS;
}

/* Whether the scores pass, not wide, runs its narrow tiles rather than its one-chain tiles. */
CSA_ABI_FN int csa_attn_narrow_scores(long long bs_rows, long long heads, long long stride) {
  return !csa_attn_wide_scores(bs_rows, heads, stride) &&
         csa_attn_score_units(bs_rows, heads, stride, CSA_NARROW_SCORE_HEADS) >= CSA_NARROW_MIN_UNITS;
}

CSA_ABI_FN int csa_attn_wide_values(long long bs_rows, long long heads) {
  return csa_attn_value_units(bs_rows, heads, CSA_WIDE_VALUE_HEADS, CSA_WIDE_VALUE_DIMS) >= CSA_WIDE_MIN_UNITS;
}

#endif /* CSA_ATTENTION_ABI_H */
