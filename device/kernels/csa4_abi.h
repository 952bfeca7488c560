/*
** csa4_abi.h: what csa4.cu and its launcher (device/csa4_device.c) must
** agree on: kernel names, block sizes, the geometry, the capture-error bit
** and the shape block every kernel takes by value.  Plain C and CUDA C++
** alike; no includes.
**
** The geometry repeats oracle/csa.h's constants so that the kernel file
** needs no oracle header; the launcher checks at compile time that the two
** agree.
*/
#ifndef CSA4_ABI_H
#define CSA4_ABI_H

#define CSA4_KERNEL_FILE "csa4.cu"
#define CSA4_KERNEL_STATE "csa4_state_copy"
#define CSA4_KERNEL_MAIN_COMPRESS "csa4_main_compress"
#define CSA4_KERNEL_INDEX_COMPRESS "csa4_index_compress"
#define CSA4_KERNEL_INDEX_QUERY "csa4_index_query"
#define CSA4_KERNEL_INDEX_SCORE "csa4_index_score"
#define CSA4_KERNEL_SELECT "csa4_select"
#define CSA4_KERNEL_BROADCAST "csa4_broadcast"
#define CSA4_KERNEL_ATTN_GATHER "csa4_attn_gather"   /* the fast attention's four passes */
#define CSA4_KERNEL_ATTN_SCORES "csa4_attn_scores"
#define CSA4_KERNEL_ATTN_SOFTMAX "csa4_attn_softmax"
#define CSA4_KERNEL_ATTN_VALUES "csa4_attn_values"
#define CSA4_KERNEL_ATTN_SCORES_NARROW "csa4_attn_scores_narrow"
#define CSA4_KERNEL_ATTN_SCORES_WIDE "csa4_attn_scores_wide" /* their wide tiles (many row groups) */
#define CSA4_KERNEL_ATTN_VALUES_WIDE "csa4_attn_values_wide"
#define CSA4_KERNEL_ATTENTION "csa4_attention"       /* the reference's one kernel (csa4_reference.cu) */

#define CSA4_STATE_THREADS 256      /* 4 carry words and a turn of cache bytes a thread, grid-stride */
/*
** A compressor block pools its rank's dims, CSA4_SLOTS_K / CANDS threads a
** dim (CANDS of the dim's 8 candidates a thread), then a RoPE warp.
*/
#define CSA4_MAIN_CLUSTER 8         /* blocks a cluster, one cluster a batch row: 64 dims a block */
#define CSA4_MAIN_CANDS 1           /* a thread per (dim, candidate) */
#define CSA4_MAIN_THREADS (CSA4_DIM_K / CSA4_MAIN_CLUSTER * CSA4_SLOTS_K / CSA4_MAIN_CANDS + 32)       /* 544 */
#define CSA4_INDEX_CLUSTER 1        /* the index stream: one block a batch row, all 128 dims */
#define CSA4_INDEX_CANDS 4          /* two threads a dim, 4 candidates each */
#define CSA4_INDEX_THREADS (CSA4_INDEX_DIM_K / CSA4_INDEX_CLUSTER * CSA4_SLOTS_K / CSA4_INDEX_CANDS + 32) /* 288 */
#define CSA4_QUERY_THREADS 64       /* one block per (b, s, index head): a RoPE warp, a transform warp */
#define CSA4_SCORE_THREADS 256      /* 8 warps over one tile of CSA4_SCORE_RECORDS records */
#define CSA4_SCORE_RECORDS 32       /* records a scoring tile: one a lane */
#define CSA4_SELECT_THREADS 512     /* a block of the selection's cluster */
#define CSA4_SELECT_CLUSTER 8       /* blocks a cluster, one cluster per (b, s) row */
#define CSA4_BROADCAST_THREADS 256  /* one thread per selected_indices element */
#define CSA4_SCORE_HEAD_CHUNK 32    /* index heads of the query staged in shared memory at once (4 a warp) */

#define CSA4_RATIO_K 4
#define CSA4_SLOTS_K 8              /* carry slots: 0..3 the previous block, 4..7 the current */
#define CSA4_DIM_K 512              /* head_dim: the main record */
#define CSA4_SOURCE_K 1024          /* main compressor width: 2 x 512 */
#define CSA4_INDEX_DIM_K 128        /* index_head_dim */
#define CSA4_INDEX_SOURCE_K 256     /* index compressor width: 2 x 128 */
#define CSA4_ROPE_K 64              /* the RoPE tail: the last 64 dims of either record */
#define CSA4_FP8_RECORD_K 583       /* 7 x (scale + 64 codes), then 64 little-endian BF16 */
#define CSA4_FP8_BLOCKS_K 7
#define CSA4_INDEX_RECORD_K 68      /* 4 x (scale + 16 bytes of packed E2M1) */
#define CSA4_FP4_BLOCKS_K 4
#define CSA4_WINDOW_K 128           /* dense sliding-window candidates */
#define CSA4_TOPK_MAX_K 512         /* the selection's capacity (oracle: CSA4_TOPK_MAX) */

/*
** The capture-error bit of a cursor that breaks csa_validate_cursor's rules
** (total < 0, total < S, Rp or Rpi < start / 4, Rc or Rci < total / 4): the
** same bit as ratio 128's CSA128_LATCH_CURSOR_BIT.  The eager path checks the
** cursor on the host and launches nothing; a captured replay has only the
** device, so csa4_state_copy ORs this bit into the runtime's latch and every
** kernel then returns without touching memory.
*/
#define CSA4_LATCH_CURSOR_BIT 1024u

/*
** The step's shape, resolved on the host from csa_dims (everything but the
** cursor, which the kernels read on the device).  Passed by value; every
** field is 8 bytes but the last two, so C and CUDA lay it out alike.
*/
typedef struct csa4_shape {
  long long batch, seq, heads;
  long long kv_len;                 /* L = current_kv.shape[1] */
  long long past_capacity;          /* Rp: past main records */
  long long present_capacity;       /* Rc: present main records */
  long long index_past_capacity;    /* Rpi */
  long long index_present_capacity; /* Rci */
  long long index_heads;            /* IH */
  long long topk;                   /* index_topk, 1..CSA4_TOPK_MAX_K */
  long long bias_dims[4];           /* right-aligned into [B, heads, S, 128 + topk] */
  float scale;                      /* the resolved attention scale */
  int has_bias;
} csa4_shape;

#endif /* CSA4_ABI_H */
