/*
** csa128_abi.h: what csa128.cu and its launcher (device/csa128_device.c)
** must agree on: kernel names, block sizes, the record geometry and the
** capture-error bit.  Plain C and CUDA C++ alike; no includes.
**
** The record geometry repeats oracle/csa.h's constants so that the kernel
** file needs no oracle header; the launcher checks at compile time that the
** two agree.
*/
#ifndef CSA128_ABI_H
#define CSA128_ABI_H

#define CSA128_KERNEL_FILE "csa128.cu"
#define CSA128_KERNEL_STATE "csa128_state_copy"
#define CSA128_KERNEL_COMPRESS "csa128_compress"
#define CSA128_KERNEL_ATTN_GATHER "csa128_attn_gather"   /* the fast attention's four passes */
#define CSA128_KERNEL_ATTN_SCORES "csa128_attn_scores"
#define CSA128_KERNEL_ATTN_SOFTMAX "csa128_attn_softmax"
#define CSA128_KERNEL_ATTN_VALUES "csa128_attn_values"
#define CSA128_KERNEL_ATTN_SCORES_NARROW "csa128_attn_scores_narrow"
#define CSA128_KERNEL_ATTN_SCORES_WIDE "csa128_attn_scores_wide" /* their wide tiles (many row groups) */
#define CSA128_KERNEL_ATTN_VALUES_WIDE "csa128_attn_values_wide"
#define CSA128_KERNEL_ATTENTION "csa128_attention"       /* the reference's one kernel */

#define CSA128_STATE_THREADS 256    /* 4 carry words and a turn of cache bytes a thread, grid-stride */
#define CSA128_COMPRESS_THREADS 544 /* a thread per (dim, 16 slots) of a cluster rank's 64 dims, + a RoPE warp */
#define CSA128_COMPRESS_CLUSTER 8   /* blocks a cluster, one cluster a batch row: 512 dims / 64 */

#define CSA128_RATIO_K 128        /* positions per compressed record (= carry slots) */
#define CSA128_DIM_K 512          /* head_dim */
#define CSA128_NOPE_K 448         /* dims 0..447: seven FP8 blocks; 448..511: the RoPE tail */
#define CSA128_ROPE_PAIRS_K 32    /* (re, im) pairs of the tail */
#define CSA128_FP8_BLOCKS_K 7
#define CSA128_FP8_RECORD_K 583   /* 7 x (scale + 64 codes), then 64 little-endian BF16 */
#define CSA128_F32_RECORD_K 2048  /* 512 f32 */
#define CSA128_WINDOW_K 128       /* dense sliding-window candidates */

/*
** The capture-error bit of a cursor that breaks csa_validate_cursor's rules
** (total < 0, total < S, Rp < start / 128, Rc < total / 128).  The eager path
** checks the cursor on the host and launches nothing; a captured replay has
** only the device, so the state kernel ORs this bit into the runtime's latch
** and every kernel then returns without touching memory.  It is not
** INDEX_SHARE_LATCH_BIT (512): that one means "an index error".
*/
#define CSA128_LATCH_CURSOR_BIT 1024u

#endif /* CSA128_ABI_H */
