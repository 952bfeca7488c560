/*
** csa_attention_staging.h: how the fast CSA attention's gather pass
** (csa_attention_tiles.h) decodes a candidate row: where the row lies and
** how it is stored (csa_cand_entry), then every element fetched as raw bytes
** before any is decoded (csa_fetch, csa_fetched_value, with the decoding
** tables of csa_decode_tables).  CUDA C++, included by
** csa_attention_tiles.h after numerics.h, nx_csa.h, csa_kernel_common.h and
** csa_sink_attention.h.
*/
#ifndef CSA_ATTENTION_STAGING_H
#define CSA_ATTENTION_STAGING_H

/* How a table row's elements are stored (csa_cand_entry). */
enum { CSA_ROW_NONE = 0, CSA_ROW_F32 = 1, CSA_ROW_FP8 = 2 };

/*
** Entry i of a table of candidate rows (the gather's is one entry a warp):
** candidate c's row and how it is stored (CSA_ROW_NONE: not live, or beyond
** count); record is csa_candidate_record(r, c).
*/
static __device__ __forceinline__ void csa_cand_entry(const void **row, unsigned char *kind, int i,
                                                      const csa_attention_row *r, const csa_cursor *cur,
                                                      long long c, long long record) {
  const float *k;
  const nx_u8 *x;
  if (!csa_candidate_at(r, cur, c, record, &k, &x)) k = NULL, x = NULL;
  row[i] = k ? (const void *)k : (const void *)x;
  kind[i] = k ? CSA_ROW_F32 : !x ? CSA_ROW_NONE : r->cache_fp8 ? CSA_ROW_FP8 : CSA_ROW_F32;
}

/*
** Element dbase + lane of a table row in two steps, dbase a multiple of 32:
** its bytes as loaded (the f32 bits, or an FP8 code and its block's scale
** byte, or a bf16 tail's two bytes), then its value (0 for no row: never
** read as one).  The gather issues every fetch of a row before it decodes
** any, so that its loads are in flight together and it waits once; both
** steps are branch-free (predicated loads, selects), so that a warp's
** fetches and decodes of several rows overlap.  A run of 32 dims from a
** multiple of 32 lies in one FP8 block of 64, whose codes are consecutive
** bytes, or in the tail, whose elements are 2 bytes apart.  An FP8 value
** is nx_csa_fp8_record_decode's product, read from the tables below.
*/
typedef struct csa_fetched {
  unsigned int first, second;
} csa_fetched;

static __device__ __forceinline__ csa_fetched csa_fetch(const void *row, int kind, int dbase, int lane) {
  const nx_u8 *rec = (const nx_u8 *)row;
  csa_fetched f = {0u, 0u};
  int first, second;
  nx_csa_fp8_record_offsets(dbase, &first, &second);
  if (dbase < NX_CSA_NOPE) {
    first += lane;
  } else {
    first += 2 * lane;
    second += 2 * lane;
  }
  /*
  ** Plain loads, though no attention pass writes the rows: ptxas hoists
  ** read-only (ld.global.nc) loads across the resident scores pass's named
  ** barriers, so that pass's producers held every stage's bytes at once
  ** (255 registers and spills, where plain loads take 207).
  */
  if (kind == CSA_ROW_F32) f.first = *((const unsigned int *)row + dbase + lane);
  if (kind == CSA_ROW_FP8) {
    f.first = rec[first];
    f.second = rec[second];
  }
  return f;
}

/*
** The decoding tables a block builds once: fp8[code] = nx_e4m3_decode(code)
** and scale[byte] = nx_ue8m0_decode(byte), so that a decode is two table
** reads and a multiply, with no branch (both routines test for their NaN and
** zero codes).  A barrier must follow before they are read.
*/
typedef struct csa_decode_tables {
  float fp8[256], scale[256];
} csa_decode_tables;

static __device__ __forceinline__ void csa_decode_tables_fill(csa_decode_tables *t) {
  int i;
  for (i = threadIdx.x; i < 256; i += blockDim.x) {
    t->fp8[i] = nx_e4m3_decode((nx_u8)i);
    t->scale[i] = nx_ue8m0_decode((nx_u8)i);
  }
}

static __device__ __forceinline__ float csa_fetched_value(const csa_decode_tables *t, int kind, int dbase,
                                                          csa_fetched f) {
  const float record = dbase < NX_CSA_NOPE ? t->fp8[f.first & 0xffu] * t->scale[f.second & 0xffu]
                                           : nx_csa_fp8_record_decode(dbase, (nx_u8)f.first, (nx_u8)f.second);
  const float value = kind == CSA_ROW_FP8 ? record : __uint_as_float(f.first);
  return kind == CSA_ROW_NONE ? 0.0f : value;
}

#endif /* CSA_ATTENTION_STAGING_H */
