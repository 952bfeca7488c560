/*
** index_share_plant.c: planted index violations (cases_is_plant, see
** index_share_cases.h): which (rule, column) a row can carry given its key
** bound, and the row that breaks the rule there and nowhere before it: a
** valid prefix of distinct increasing keys, the offending value, then
** padding or junk that must not matter (the first violation wins).
** is.indexviol plants viol= at every step; cases_is_parse checks that it
** can (is_plant_feasible).
*/
#include "cases/index_share_cases_internal.h"

#include "cases/rng.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

/*
** Can cases_is_plant put `rule` at `column` of a K-wide row whose bound is
** bnd?  The valid prefix needs `column` distinct keys below bnd (from 1 for
** not_increasing, whose offending value must be below a previous one >= 1).
*/
int is_plant_feasible(int rule, long long column, long long K, long long bnd) {
  if (rule == INDEX_RULE_ALL_PADDING) return column == -1;
  if (column < 0 || column >= K) return 0;
  switch (rule) {
  case INDEX_RULE_SENTINEL:
  case INDEX_RULE_OUT_OF_RANGE: return column <= bnd;
  case INDEX_RULE_DUPLICATE: return column >= 1 && column <= bnd;
  case INDEX_RULE_NOT_INCREASING: return column >= 1 && column <= bnd - 1;
  case INDEX_RULE_AFTER_PADDING: return column >= 1 && bnd >= 1;
  default: return 0;
  }
}

/*
** The offending value for `rule` (not after_padding, duplicate or
** not_increasing, whose value follows from the prefix): a few kinds each,
** including the i64 values whose low 32 bits are a valid index (a kernel
** that truncates would accept them).
*/
static long long plant_value(int rule, dtype dt, long long bnd, cases_rng *r) {
  long long small = cases_rng_next_range(r, 0, bnd > 0 ? bnd - 1 : 0);
  int kind = (int)cases_rng_next_range(r, 0, dt == DTYPE_I64 ? 3 : 2);
  if (rule == INDEX_RULE_SENTINEL) {
    switch (kind) {
    case 0: return -2;
    case 1: return -3 - cases_rng_next_range(r, 0, 1000);
    case 2: return dt == DTYPE_I64 ? LLONG_MIN : INT32_MIN;
    default: return -(1ll << 32) + small; /* low 32 bits: small */
    }
  }
  switch (kind) { /* out of range */
  case 0: return bnd;
  case 1: {
    long long v = bnd + 1 + cases_rng_next_range(r, 0, 1000);
    return dt == DTYPE_I32 && v > INT32_MAX ? INT32_MAX : v; /* INT32_MAX > any bound (IS_DIM_MAX) */
  }
  case 2: return dt == DTYPE_I64 ? LLONG_MAX : INT32_MAX;
  default: return (1ll << 32) + small; /* low 32 bits: small */
  }
}

int cases_is_plant(const is_case *c, tensor *ix, int rule, long long b, long long h, long long q, long long column,
                   const long long *bound) {
  long long K, base, bnd, col, prefix, pad_from, *keys;
  cases_rng r;
  uint64_t key;
  if ((ix->dt != DTYPE_I32 && ix->dt != DTYPE_I64) || ix->rank != 4) return -1;
  if (b < 0 || b >= ix->shape[0] || h < 0 || h >= ix->shape[1] || q < 0 || q >= ix->shape[2]) return -1;
  K = ix->shape[3], bnd = bound[b];
  if (!is_plant_feasible(rule, column, K, bnd)) return -1;
  base = ((b * ix->shape[1] + h) * ix->shape[2] + q) * K;
  key = cases_rng_u64(c->seed, IS_STREAM_PLANT, (uint32_t)rule, (uint64_t)b);
  key = cases_rng_u64(key, IS_STREAM_PLANT, (uint32_t)h, (uint64_t)q);
  cases_rng_init(&r, key, IS_STREAM_PLANT, 0, (uint64_t)(column + 1) << 20);
  if (rule == INDEX_RULE_ALL_PADDING) {
    for (col = 0; col < K; col++) is_store_index(ix, base + col, -1);
    return 0;
  }
  if (!(keys = malloc((size_t)(column + 1) * sizeof *keys))) return -1;
  /* The valid prefix: `prefix` keys, then -1 up to the column (after_padding only). */
  prefix = column, pad_from = column;
  if (rule == INDEX_RULE_AFTER_PADDING) {
    pad_from = cases_rng_next_range(&r, 0, (column - 1 < bnd - 1 ? column - 1 : bnd - 1));
    is_sample_sorted(&r, pad_from + 1, 0, bnd, keys); /* the last one goes after the padding */
    prefix = pad_from;
  } else {
    is_sample_sorted(&r, prefix, rule == INDEX_RULE_NOT_INCREASING ? 1 : 0, bnd, keys);
  }
  for (col = 0; col < column; col++) is_store_index(ix, base + col, col < pad_from ? keys[col] : -1);
  switch (rule) {
  case INDEX_RULE_AFTER_PADDING: is_store_index(ix, base + column, keys[prefix]); break;
  case INDEX_RULE_DUPLICATE: is_store_index(ix, base + column, keys[prefix - 1]); break;
  case INDEX_RULE_NOT_INCREASING:
    is_store_index(ix, base + column, cases_rng_next_range(&r, 0, keys[prefix - 1] - 1));
    break;
  default: is_store_index(ix, base + column, plant_value(rule, ix->dt, bnd, &r)); break;
  }
  /* After it: padding, or junk that must not matter (the first violation wins). */
  if (cases_rng_next(&r) & 1u)
    for (col = column + 1; col < K; col++) is_store_index(ix, base + col, -1);
  else
    for (col = column + 1; col < K; col++) is_store_index(ix, base + col, cases_rng_next_range(&r, -3, bnd + 3));
  free(keys);
  return 0;
}
