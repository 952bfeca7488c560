/*
** csa4_cases_internal.h: what the files of the ratio-4 case families share
** and nobody else needs: the random streams, the step geometry, the plan of
** one step, and the csa4.contract sites and mutations.
**   csa4_cases.c        spec grammar, parse, format, ids, expectations
**   csa4_contract.c     where each contract code can be broken, and how
**   csa4_materialize.c  one step's tensors (plan, fills, tie crafting)
**   csa4_enumerate.c    the families' enumerators and the gate suite part
*/
#ifndef CASES_CSA4_CASES_INTERNAL_H
#define CASES_CSA4_CASES_INTERNAL_H

#include "cases/csa4_cases.h"

/*
** Random streams.  Every draw names a stream, so adding a draw to one fill
** never shifts another's values.  Token streams (per position) draw with
** the batch row as the rng step; the others with the case step or 0.
*/
enum csa4_stream {
  CSA4_STREAM_QUERY = 0,  /* per position */
  CSA4_STREAM_KV,         /* per position: current_kv */
  CSA4_STREAM_CKV,        /* per position: compressor_kv */
  CSA4_STREAM_GATE,       /* per position: compressor_gate */
  CSA4_STREAM_APE,
  CSA4_STREAM_NORM,
  CSA4_STREAM_PAST,       /* synthetic past main records */
  CSA4_STREAM_CARRY,      /* synthetic main carry */
  CSA4_STREAM_SINK,
  CSA4_STREAM_BIAS,
  CSA4_STREAM_IQUERY,     /* per position: index_query */
  CSA4_STREAM_IWEIGHT,    /* per position: index_weight */
  CSA4_STREAM_IKV,        /* per position: index_compressor_kv */
  CSA4_STREAM_IGATE,      /* per position: index_compressor_gate */
  CSA4_STREAM_IAPE,
  CSA4_STREAM_INORM,
  CSA4_STREAM_IPAST,      /* synthetic past index key records */
  CSA4_STREAM_ICARRY,     /* synthetic index carry */
  CSA4_STREAM_TIE,        /* tie crafting: signs of zeros, mode mixing */
  CSA4_STREAM_JUNK = 32,  /* + input slot (outputs at 32 + 20 + o): mutated tensors' bytes */
  CSA4_STREAM_ENUM = 96   /* + family: enumerator draws */
};

#define CSA4_DIM_MAX ((1ll << 30) - 1)
#define CSA4_START_MAX (1ll << 40)
#define CSA4_STEPS_MAX 4096

static inline long long csa4_final_total(const csa4_case *c) { return c->start + c->prefill + c->decode; }
static inline long long csa4_step_seq(const csa4_case *c, int step) { return step == 0 ? c->prefill : 1; }
static inline long long csa4_step_total(const csa4_case *c, int step) { return c->start + c->prefill + step; }
static inline long long csa4_candidates(const csa4_case *c) { return CSA_DENSE_WINDOW + c->topk; }

/* One step's tensors before allocation, and what the operator is told. */
typedef struct csa4_plan {
  tensor in[CSA_INPUT_COUNT];
  tensor out[CSA_OUTPUT_MAX];
  unsigned char junk_in[CSA_INPUT_COUNT], junk_out[CSA_OUTPUT_MAX]; /* mutated: junk bytes */
  int n_in, n_out;
  long long total; /* the value input 9 holds */
  csa_attrs attrs;
} csa4_plan;

/*
** csa4.contract sites.  0 when rule c->contract can be broken at
** c->contract_site in the case c describes (the site alone: other needs,
** such as a bias, are csa4_cases.c's), with *axis (may be NULL) the axis
** the rejection must name; -1 otherwise.
*/
int csa4_contract_site(const csa4_case *c, int *axis);

/* Applies the one csa4.contract mutation to a valid step's plan. */
void csa4_plan_mutate(const csa4_case *c, csa4_plan *p);

#endif
