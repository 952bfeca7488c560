/*
** csa_state_abi.h: how the CSA state copies (csa4_state_copy,
** csa128_state_copy) split a cache's bytes among their threads, which the
** launchers (csa4_device.c, csa128_device.c) size the copy's grid by.  Plain
** C and CUDA C++ alike.
**
** A thread copies four carry words (csa_copy_carry, csa_kernel_common.h)
** and CSA_COPY_UNITS 16-byte cache units a turn (csa_copy_cache_rows), both
** grid-stride.  The grid changes only how
** fast the copy runs, never what it writes.
*/
#ifndef CSA_STATE_ABI_H
#define CSA_STATE_ABI_H

#define CSA_COPY_UNITS 4                        /* 16-byte units a thread copies a turn */
#define CSA_COPY_TURN_BYTES (16 * CSA_COPY_UNITS)

#ifdef __CUDACC__
#define CSA_STATE_ABI_FN static __host__ __device__ __forceinline__
#else
#define CSA_STATE_ABI_FN static inline
#endif

/* Threads for n carry words: four a thread (csa_copy_carry). */
CSA_STATE_ABI_FN long long csa_copy_carry_threads(long long words) { return (words + 3) / 4; }

/* Turns over a cache of `bytes` bytes: up to 15 bytes before its first 16-byte boundary, then whole turns. */
CSA_STATE_ABI_FN long long csa_copy_turns(long long bytes) {
  return bytes > 0 ? (bytes + 15 + CSA_COPY_TURN_BYTES - 1) / CSA_COPY_TURN_BYTES : 0;
}

#endif /* CSA_STATE_ABI_H */
