/*
** csa_attention_abi.h: the tile geometry of the fast CSA attention passes
** (csa_attention_tiles.h), which the launchers (csa4_device.c,
** csa128_device.c) need for their grids.  Plain C and CUDA C++ alike.
*/
#ifndef CSA_ATTENTION_ABI_H
#define CSA_ATTENTION_ABI_H

#define CSA_TILE_THREADS 256 /* every attention pass */
#define CSA_TILE_HEADS 16    /* heads a scores or values tile: two a thread */
#define CSA_TILE_CANDS 32    /* candidates a scores tile (a lane each) and a values chunk */
#define CSA_TILE_DIMS 32     /* output dims a values tile (a lane each) */
#define CSA_TILE_K 32        /* dims of q and k staged at once by the scores pass */
#define CSA_TILE_ROWS (CSA_TILE_THREADS / 32) /* softmax rows a block: a warp each */

#endif /* CSA_ATTENTION_ABI_H */
