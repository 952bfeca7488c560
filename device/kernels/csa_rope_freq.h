/*
** csa_rope_freq.h: nx_csa_rope_freq(pair) of every RoPE pair (oracle/numerics/
** nx_csa.h), as a table the CSA kernels read instead of computing it.
** Plain C and CUDA C++ alike.
**
** Why a table: the frequency is a correctly rounded nx_powf, a double-double
** routine of a few thousand cycles, and the compressors and the index query
** computed it on one warp at the start of every launch, ahead of the angle's
** nx_sincosf on the same warp: a chain that the record waited for.  It
** depends on the pair alone.  The values are nx_csa_rope_freq's own bits,
** printed with "%a"; device/tests/test_kernel_tables.c checks every entry
** against the function, so a change to either fails the unit tests.
*/
#ifndef CSA_ROPE_FREQ_H
#define CSA_ROPE_FREQ_H

#define CSA_ROPE_FREQ_PAIRS 32 /* NX_CSA_ROPE_PAIRS */

#ifdef __CUDACC__
static __device__ const float csa_rope_freq_table[CSA_ROPE_FREQ_PAIRS] = {
#else
static const float csa_rope_freq_table[CSA_ROPE_FREQ_PAIRS] = {
#endif
    0x1p+0f,         0x1.601474p-1f,  0x1.e4383ep-2f,  0x1.4cfa02p-2f,  0x1.c9f25cp-3f,  0x1.3ae8eap-3f,
    0x1.b1196ap-4f,  0x1.29d2c6p-4f,  0x1.99999ap-5f,  0x1.19a9f6p-5f,  0x1.836032p-6f,  0x1.0a619cp-6f,
    0x1.6e5b7ep-7f,  0x1.f7db1p-8f,   0x1.5a7abap-8f,  0x1.dc846ep-9f,  0x1.28f5c2p-9f,  0x1.6e29cp-10f,
    0x1.bd7b6cp-11f, 0x1.0a619cp-11f, 0x1.37675ep-12f, 0x1.60b2fp-13f,  0x1.7d209ap-14f, 0x1.7d36bcp-15f,
    0x1.47ae18p-16f, 0x1.6887a2p-18f, 0x1.efd74ap-19f, 0x1.54f7d2p-19f, 0x1.d4effcp-20f, 0x1.4277b8p-20f,
    0x1.bb7e6p-21f,  0x1.30f898p-21f,
};

#endif /* CSA_ROPE_FREQ_H */
