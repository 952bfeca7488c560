/*
** index_share_check.c: the consistency rules an IndexShare spec must meet
** beyond each value's own syntax (index_share_cases.h "Spec grammar"):
** nkv divides n, ih is 1 or n, a capacity present's needs and valid
** lengths, a bias that broadcasts (is.bias excepted), and each family's
** own (an is.indexviol row inside the tensor and plantable, an is.capfront
** capacity, an is.masked bias and row count, what an is.contract kind needs
** of its base).  cases_is_parse applies them after the tokens parse.
*/
#include "cases/index_share_cases_internal.h"

#include "cases/spec_text.h"

/* Does the bias broadcast to [B, N, sq, cache]? */
static int bias_broadcasts(const is_case *c) {
  long long target[4] = {c->batch, c->num_heads, c->q_seq, is_case_cache(c)}, d4[4];
  int i;
  is_bias_dims4(c->bias_rank, c->bias_shape, d4);
  for (i = 0; i < 4; i++)
    if (d4[i] != 1 && d4[i] != target[i]) return 0;
  return 1;
}

static int check_capacity(const is_case *c, char *err, size_t len) {
  int i;
  if (!c->capacity)
    return c->n_valid_len ? spec_inconsistent(&is_grammar, c, "vlen", err, len, "vlen is for present=cap") : 0;
  if (c->n_outputs != 3)
    return spec_inconsistent(&is_grammar, c, "present", err, len, "a capacity present needs out=3");
  if (c->past_seq <= 0)
    return spec_inconsistent(&is_grammar, c, "present", err, len, "a capacity present needs sp > 0");
  if (!is_case_has_bias(c))
    return spec_inconsistent(&is_grammar, c, "present", err, len, "a capacity present needs a bias");
  if (c->n_valid_len != c->batch)
    return spec_inconsistent(&is_grammar, c, "vlen", err, len, "needs one entry per batch (b=%lld)", c->batch);
  for (i = 0; i < c->n_valid_len; i++) {
    long long v = c->valid_len[i];
    if (v > c->past_seq)
      return spec_inconsistent(&is_grammar, c, "vlen", err, len, "%lld is above the capacity sp=%lld", v, c->past_seq);
    if (v == 0 && c->family != IS_FAMILY_CAPFRONT)
      return spec_inconsistent(&is_grammar, c, "vlen", err, len, "a valid length of 0 only belongs in is.capfront");
    if (is_bias_b_broadcast(c) && v != c->valid_len[0])
      return spec_inconsistent(&is_grammar, c, "vlen", err, len,
                               "the bias broadcasts over batch, so it carries one valid length");
    if (is_bias_k_broadcast(c) && v != 0 && v != c->past_seq)
      return spec_inconsistent(&is_grammar, c, "vlen", err, len,
                               "the bias broadcasts over columns, so the valid length is 0 or sp");
  }
  return 0;
}

/* What a contract kind/target needs of the base configuration. */
static int check_contract(const is_case *c, char *err, size_t len) {
  int k = c->contract, slot = c->contract_target >= 0 ? is_slot_of_target(c->contract_target) : -1;
  if (is_ck_info[k].arg == IS_CK_ARG_COUNT) {
    int ok = k == IS_CK_INPUTS ? (c->contract_target == 5 || c->contract_target == 8)
                               : (c->contract_target == 0 || c->contract_target == 2);
    return ok ? 0
              : spec_inconsistent(&is_grammar, c, "contract", err, len,
                                  "the count must break the arity (inputs 5|8, outputs 0|2)");
  }
  if (is_ck_info[k].arg != IS_CK_ARG_NONE && !(is_ck_info[k].slots & IS_SLOT_BIT(slot)))
    return spec_inconsistent(&is_grammar, c, "contract", err, len, "%s cannot target %s", is_ck_names[k],
                             is_slot_names[slot]);
  if (((slot == IS_IN_PAST_KEY || slot == IS_IN_PAST_VALUE) || k == IS_CK_PAST_UNPAIRED || k == IS_CK_PRESENT_MIXED) &&
      c->past_seq == 0)
    return spec_inconsistent(&is_grammar, c, "contract", err, len, "needs a past (sp > 0)");
  if ((slot >= IS_INPUT_COUNT + 1 || k == IS_CK_PRESENT_MIXED) && c->n_outputs != 3)
    return spec_inconsistent(&is_grammar, c, "contract", err, len, "needs the present outputs (out=3)");
  if (slot == IS_IN_BIAS && !is_case_has_bias(c))
    return spec_inconsistent(&is_grammar, c, "contract", err, len, "needs a bias");
  if ((k == IS_CK_CAP_NO_BIAS || k == IS_CK_CAP_NO_PAST) && !c->capacity)
    return spec_inconsistent(&is_grammar, c, "contract", err, len, "needs present=cap");
  if (k == IS_CK_CAP_NO_PAST && c->past_seq == c->current_seq)
    return spec_inconsistent(&is_grammar, c, "contract", err, len,
                             "needs sp != sc, or the present would be a valid growing one");
  if (k == IS_CK_DTYPE && c->contract_dtype == (slot == IS_IN_INDICES ? c->index_dt : c->dt))
    return spec_inconsistent(&is_grammar, c, "contract", err, len, "the dtype is the one %s should have",
                             is_slot_names[slot]);
  return 0;
}

static int check_family(const is_case *c, char *err, size_t len) {
  long long bound[IS_CASE_MAX_BATCH];
  switch (c->family) {
  case IS_FAMILY_INDEXVIOL:
    if (c->viol_b >= c->batch || c->viol_h >= c->index_heads || c->viol_q >= c->q_seq)
      return spec_inconsistent(&is_grammar, c, "viol", err, len, "the row is outside [b=%lld, ih=%lld, sq=%lld]",
                               c->batch, c->index_heads, c->q_seq);
    if (c->batch > IS_CASE_MAX_BATCH)
      return spec_inconsistent(&is_grammar, c, "b", err, len, "is.indexviol allows b <= %d", IS_CASE_MAX_BATCH);
    cases_is_bounds(c, bound);
    if (!is_plant_feasible(c->viol_rule, c->viol_column, c->selected_width, bound[c->viol_b]))
      return spec_inconsistent(&is_grammar, c, "viol", err, len,
                               "cannot be planted at that column with k=%lld and bound %lld", c->selected_width,
                               bound[c->viol_b]);
    return 0;
  case IS_FAMILY_CAPFRONT:
    return c->capacity ? 0 : spec_inconsistent(&is_grammar, c, "present", err, len, "is.capfront needs present=cap");
  case IS_FAMILY_MASKED:
    if (!is_case_has_bias(c)) return spec_inconsistent(&is_grammar, c, "bias", err, len, "is.masked needs a bias");
    if (c->masked_rows > c->batch * c->num_heads * c->q_seq)
      return spec_inconsistent(&is_grammar, c, "masked", err, len, "more than the b*n*sq = %lld rows",
                               c->batch * c->num_heads * c->q_seq);
    return 0;
  case IS_FAMILY_CONTRACT: return check_contract(c, err, len);
  default: return 0;
  }
}

/* The rules a spec must meet beyond each value's own syntax (index_share_cases_internal.h). */
int is_check_case(const is_case *c, char *err, size_t len) {
  if (c->num_heads % is_case_kv(c))
    return spec_inconsistent(&is_grammar, c, "nkv", err, len, "does not divide n=%lld", c->num_heads);
  if (c->index_heads != 1 && c->index_heads != c->num_heads)
    return spec_inconsistent(&is_grammar, c, "ih", err, len, "index heads must be 1 or n=%lld", c->num_heads);
  if (check_capacity(c, err, len)) return -1;
  if (is_case_has_bias(c) && c->family != IS_FAMILY_BIAS && !bias_broadcasts(c))
    return spec_inconsistent(&is_grammar, c, "bias", err, len, "does not broadcast to [%lld, %lld, %lld, %lld]",
                             c->batch, c->num_heads, c->q_seq, is_case_cache(c));
  return check_family(c, err, len);
}
