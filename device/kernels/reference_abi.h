/*
** reference_abi.h: what the reference kernels (csa128_reference.cu,
** csa4_reference.cu, index_share_reference.cu) and their launchers agree on
** beyond the fast kernels' ABI headers: the files and the block sizes.
** Plain C and CUDA C++ alike; no includes.
**
** The reference variant is the seed's serial design kept as a baseline
** (issue 8): each reference kernel has the name and the argument list of
** the fast kernel it stands in for, so a launcher only picks the module and
** the launch geometry.  Kernels the seed already runs in parallel (the
** state copies, the selection broadcast, the IndexShare present builds and
** index-row validation) have no reference twin: both variants launch the
** fast module's.
*/
#ifndef REFERENCE_ABI_H
#define REFERENCE_ABI_H

#define CSA128_REFERENCE_FILE "csa128_reference.cu"
#define CSA4_REFERENCE_FILE "csa4_reference.cu"
#define IS_REFERENCE_FILE "index_share_reference.cu"

/*
** A serial kernel runs one thread per unit of work (a batch row for the
** compressors, a (batch, query) row for the ratio-4 indexer), one block per
** unit, as the seed launches them (block_dim 1); their __launch_bounds__
** say so, and only thread 0 of a block works.
*/
#define REF_SERIAL_THREADS 1
#define REF_ATTN_THREADS 256     /* the seed's ATTENTION_BLOCK: thread 0 scores, all do P.V */
#define REF_IS_ROW_THREADS 128   /* the seed's ROW_THREADS for IndexShare rows */
#define REF_IS_FRONTIER_THREADS 256 /* the seed's BLOCK: one thread per batch */

#endif /* REFERENCE_ABI_H */
