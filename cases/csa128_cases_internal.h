/*
** csa128_cases_internal.h: what the files of the ratio-128 case families
** share and nobody else needs: the random streams, the family names and
** two derived sizes.
**   csa128_cases.c        spec grammar, parse, format, ids, expectations
**   csa128_materialize.c  one step's tensors (plan, csa128.contract
**                         mutations, fills)
**   csa128_enumerate.c    the families' enumerators and the gate and
**                         nightly suite parts
*/
#ifndef CASES_CSA128_CASES_INTERNAL_H
#define CASES_CSA128_CASES_INTERNAL_H

#include "cases/csa128_cases.h"

/*
** Random streams.  Every draw names a stream, so adding a draw to one fill
** never shifts another's values.  (Ratio 4's are csa4_cases_internal.h's
** CSA4_STREAM_*.)
*/
enum csa_stream {
  CSA_STREAM_QUERY = 0,
  CSA_STREAM_KV,       /* per position: current_kv */
  CSA_STREAM_CKV,      /* per position: compressor_kv */
  CSA_STREAM_GATE,     /* per position: compressor_gate */
  CSA_STREAM_APE,
  CSA_STREAM_NORM,
  CSA_STREAM_PAST,     /* synthetic past records */
  CSA_STREAM_CARRY,    /* synthetic carry */
  CSA_STREAM_SINK,
  CSA_STREAM_BIAS,
  CSA_STREAM_JUNK = 32, /* + input slot (outputs at 32 + 20 + o): mutated tensors' bytes */
  CSA_STREAM_ENUM = 96  /* + family: enumerator draws */
};

extern const char *const csa128_family_names[CSA_FAMILY_COUNT];

/* The cursor after the last step. */
static inline long long csa128_final_total(const csa_case *c) { return c->start + c->prefill + c->decode; }

/* The bias shape right-aligned into 4 dims (1 where absent). */
static inline void csa128_bias_dims4(const csa_case *c, long long *d4) {
  csa_case_bias_dims4(c->bias_rank, c->bias_shape, d4);
}

#endif
