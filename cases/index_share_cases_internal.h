/*
** index_share_cases_internal.h: what the files of the IndexShare case
** families share and nobody else needs: the random streams, the grammar's
** limits and key table view, the is.contract kinds' targets, the derived
** sizes, and the few helpers one file defines for another.
**   index_share_cases.c        names, value parsers and formatters, the key
**                              table, format, ids, bounds, parse
**   index_share_check.c        the consistency rules a parsed spec must meet
**   index_share_materialize.c  one step's plan (shapes, is.contract
**                              mutations), materialize / release
**   index_share_fill.c         the fills: values, is.numeric specials, index
**                              rows, the bias (capacity frontier, masked rows)
**   index_share_plant.c        planted index violations (cases_is_plant)
**   index_share_enumerate.c    the families' enumerators
**   index_share_suite.c        the IndexShare part of the gate and nightly
**                              suites
*/
#ifndef CASES_INDEX_SHARE_CASES_INTERNAL_H
#define CASES_INDEX_SHARE_CASES_INTERNAL_H

#include "cases/index_share_cases.h"
#include "cases/rng.h"
#include "cases/spec_text.h"

/*
** Random streams.  Every random draw names a stream, so adding a draw to
** one fill never shifts another's values.
*/
enum is_stream {
  IS_STREAM_TENSOR = 0,   /* + input slot: element values */
  IS_STREAM_SPECIAL = 16, /* + input slot: is.numeric specials */
  IS_STREAM_ROWS = 32,    /* index rows */
  IS_STREAM_GAPS,         /* is.capfront -inf gap columns */
  IS_STREAM_INNER,        /* is.capfront specials inside the frontier */
  IS_STREAM_TAIL,         /* is.capfront mixed tail */
  IS_STREAM_MASK,         /* is.masked rows */
  IS_STREAM_PLANT,        /* cases_is_plant's choices */
  IS_STREAM_ENUM = 64     /* + family: enumerator draws */
};

#define IS_DIM_MAX ((1ll << 30) - 1) /* any dim; sp + sc + 1 then fits an i32 */
#define IS_K_MAX 65536
#define IS_GAPS_MAX 1024

/* The spec grammar (index_share_cases.c), for spec_inconsistent's messages. */
extern const spec_grammar is_grammar;

extern const char *const is_family_names[IS_FAMILY_COUNT];
extern const char *const is_ck_names[IS_CK_COUNT];

/* Contract targets as slots: inputs 0..6, then outputs 0..2 at 7..9. */
#define IS_SLOT_COUNT 10
#define IS_SLOT_BIT(slot) (1u << (slot))
extern const char *const is_slot_names[IS_SLOT_COUNT];

static inline int is_slot_of_target(int target) { return target < 100 ? target : IS_INPUT_COUNT + target - 100; }
static inline int is_target_of_slot(int slot) { return slot < IS_INPUT_COUNT ? slot : 100 + slot - IS_INPUT_COUNT; }

/* What follows an is.contract kind's name: nothing, a target, a target and a dtype, or an arity count. */
enum is_ck_arg { IS_CK_ARG_NONE, IS_CK_ARG_TARGET, IS_CK_ARG_TARGET_DTYPE, IS_CK_ARG_COUNT };
typedef struct is_ck_form {
  enum is_ck_arg arg;
  unsigned slots; /* targets the kind accepts (IS_CK_ARG_TARGET*), IS_SLOT_BIT()s */
} is_ck_form;
extern const is_ck_form is_ck_info[IS_CK_COUNT];

/* Derived sizes. */
static inline long long is_case_kv(const is_case *c) { return c->kv_num_heads ? c->kv_num_heads : c->num_heads; }
static inline long long is_case_total(const is_case *c) { return c->past_seq + c->current_seq; }
static inline long long is_case_cache(const is_case *c) { return c->capacity ? c->past_seq : is_case_total(c); }
static inline int is_case_has_bias(const is_case *c) { return c->bias_rank >= 0; }

/* The bias shape right-aligned into 4 dims (1 where absent). */
static inline void is_bias_dims4(int rank, const long long *shape, long long *d4) {
  int i;
  for (i = 0; i < 4; i++) d4[i] = i < 4 - rank ? 1 : shape[i - (4 - rank)];
}

/* The bias covers every column with one value (rank 0, or a last dim of 1). */
static inline int is_bias_k_broadcast(const is_case *c) {
  return c->bias_rank == 0 || c->bias_shape[c->bias_rank - 1] == 1;
}
/* One bias batch serves every batch (fewer than 4 dims, or a leading 1). */
static inline int is_bias_b_broadcast(const is_case *c) { return c->bias_rank < 4 || c->bias_shape[0] == 1; }

/* index_share_check.c: the rules a parsed spec must meet beyond each value's own syntax. */
int is_check_case(const is_case *c, char *err, size_t len);

/* index_share_plant.c: can cases_is_plant put `rule` at `column` of a K-wide row whose bound is bnd? */
int is_plant_feasible(int rule, long long column, long long K, long long bnd);

/* index_share_fill.c: stores index value v (an index tensor may have a float dtype in is.contract). */
void is_store_index(tensor *t, long long i, long long v);
/* index_share_fill.c: n distinct values of [lo, hi) in increasing order (Floyd's sampling); out holds n. */
void is_sample_sorted(cases_rng *r, long long n, long long lo, long long hi, long long *out);
/* index_share_fill.c: fills a step's allocated inputs (bound: each batch's key bound, cases_is_bounds). */
int is_fill_inputs(const is_case *c, int step, tensor *in, const long long *bound);

/* index_share_enumerate.c: count specs of family f, drawn from seed; nightly: the nightly suite's larger shapes. */
int is_enumerate(int f, int count, unsigned long long seed, int nightly, void (*emit)(const char *spec, void *ctx),
                 void *ctx);

#endif
