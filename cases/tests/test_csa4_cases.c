/*
** test_csa4_cases.c: the CSA ratio-4 case generator (cases/csa4_cases.h)
** without the oracle's math: spec text, ids, what the gate suite covers,
** the tensors of a step, and the committed corpus.  test_csa4_oracle.c runs
** the cases through the oracle.  Failures print the spec.
*/
#include "cases/case_spec.h"
#include "cases/csa4_cases.h"
#include "csa4_test_util.h"
#include "oracle/numerics/numerics.h"
#include "oracle/numerics/nx_csa.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------- spec text and ids */

Test(csa4_spec, suite_round_trips_and_ids_are_unique) {
  spec_set s = csa4_generated_suite();
  char **ids = calloc((size_t)s.n, sizeof *ids);
  int i, j;
  for (i = 0; i < s.n; i++) {
    csa4_case c = csa4_parse_or_die(s.v[i]);
    char back[CSA4_CASE_SPEC_MAX], id[CASE_ID_MAX], id2[CASE_ID_MAX];
    cr_assert_eq(cases_csa4_format(&c, back, sizeof back), 0);
    cr_assert_str_eq(back, s.v[i], "not canonical:\n  %s\n  %s", s.v[i], back);
    cr_assert_eq(cases_csa4_id(&c, id, sizeof id), 0);
    cr_assert_eq(case_id_from_spec(s.v[i], id2, sizeof id2), 0);
    cr_assert_str_eq(id, id2);
    cr_assert(!strncmp(id, cases_csa4_family_name(c.family), strlen(cases_csa4_family_name(c.family))));
    ids[i] = strdup(id);
  }
  for (i = 0; i < s.n; i++)
    for (j = i + 1; j < s.n; j++) cr_assert_str_neq(ids[i], ids[j], "id %s twice:\n  %s\n  %s", ids[i], s.v[i], s.v[j]);
  for (i = 0; i < s.n; i++) free(ids[i]);
  free(ids);
  spec_set_free(&s);
}

#define CANON                                                                                                          \
  "family=csa4.chain op=CompressedSparseAttention ratio=4 b=2 heads=1 iheads=4 topk=7 window=128 start=0 "             \
  "prefill=5 decode=40 cap=12 outputs=6 bias=1x1x1x135 sink=large scale=none seed=7"

Test(csa4_spec, token_order_does_not_matter_and_ids_are_stable) {
  const char *shuffled = "seed=7 sink=large  family=csa4.chain cap=12 op=CompressedSparseAttention ratio=4 outputs=6 "
                         "heads=1 b=2 iheads=4 topk=7 window=128 start=0 decode=40 prefill=5 bias=1x1x1x135 scale=none";
  csa4_case a = csa4_parse_or_die(CANON), b = csa4_parse_or_die(shuffled);
  char ta[CSA4_CASE_SPEC_MAX], tb[CSA4_CASE_SPEC_MAX], id[CASE_ID_MAX];
  cr_assert_eq(cases_csa4_format(&a, ta, sizeof ta), 0);
  cr_assert_eq(cases_csa4_format(&b, tb, sizeof tb), 0);
  cr_assert_str_eq(ta, CANON);
  cr_assert_str_eq(tb, CANON);
  cr_assert_eq(cases_csa4_steps(&a), 41);
  /* The id is the family and the spec's XXH3 digest: pinned, so a grammar change that renames cases shows. */
  cr_assert_eq(cases_csa4_id(&a, id, sizeof id), 0);
  cr_assert_str_eq(id, "csa4.chain.0961f185", "the id of the header's example is now %s", id);
}

#define HEAD "family=csa4.chain op=CompressedSparseAttention ratio=4 "
#define DIMS "b=1 heads=2 iheads=4 topk=7 window=128 start=0 prefill=3 decode=2 cap=1 outputs=5 "
#define TAIL "sink=zero scale=none seed=1"
#define CONTRACT(start, bias, rest)                                                                                    \
  "family=csa4.contract op=CompressedSparseAttention ratio=4 b=1 heads=2 iheads=4 topk=7 window=128 "                  \
  "start=" start " prefill=3 decode=0 cap=4 outputs=5 bias=" bias " sink=zero scale=none " rest " seed=1"
#define TIES "family=csa4.ties op=CompressedSparseAttention ratio=4 " DIMS "bias=none sink=zero scale=none "

/* cases_csa4_parse for csa_test_expect_parse_rows. */
static int parse4(const char *spec, char *err, size_t len) {
  csa4_case c;
  return cases_csa4_parse(spec, &c, err, len);
}

Test(csa4_spec, parse_errors_name_the_token) {
  static const csa_parse_row rows[] = {
      {HEAD DIMS "bias=none " TAIL, NULL},
      {HEAD "b=0 heads=2 iheads=4 topk=7 window=128 start=0 prefill=3 decode=2 cap=1 outputs=5 bias=none " TAIL,
       "bad value in token 'b=0'"},
      {HEAD "b=1 heads=2 iheads=0 topk=7 window=128 start=0 prefill=3 decode=2 cap=1 outputs=5 bias=none " TAIL,
       "bad value in token 'iheads=0'"},
      {HEAD "b=1 heads=2 iheads=4 topk=0 window=128 start=0 prefill=3 decode=2 cap=1 outputs=5 bias=none " TAIL,
       "bad value in token 'topk=0'"},
      {HEAD "b=1 heads=2 iheads=4 topk=513 window=128 start=0 prefill=3 decode=2 cap=1 outputs=5 bias=none " TAIL,
       "bad value in token 'topk=513'"},
      {HEAD "b=1 heads=2 iheads=4 topk=7 window=128 start=0 prefill=3 decode=2 cap=1 outputs=4 bias=none " TAIL,
       "bad value in token 'outputs=4'"},
      {HEAD "b=1 heads=2 iheads=4 topk=07 window=128 start=0 prefill=3 decode=2 cap=1 outputs=5 bias=none " TAIL,
       "bad value in token 'topk=07'"},
      {HEAD DIMS "bias=1x2x3x4x5 " TAIL, "bad value in token 'bias=1x2x3x4x5'"},
      {HEAD DIMS "bias=none sink=big scale=none seed=1", "bad value in token 'sink=big'"},
      {HEAD DIMS "bias=none sink=zero scale=0x1.0p-3 seed=1", "bad value in token 'scale=0x1.0p-3'"},
      {HEAD DIMS "bias=none " TAIL " b=1", "repeated key in token 'b=1'"},
      {HEAD DIMS "bias=none " TAIL " cache=fp8", "unknown key in token 'cache=fp8'"},
      {HEAD DIMS "bias=none " TAIL " ties=relu", "key not used by family csa4.chain in token 'ties=relu'"},
      {HEAD DIMS "bias=none " TAIL " contract=scale", "key not used by family csa4.chain in token 'contract=scale'"},
      {HEAD DIMS "bias=none " TAIL " at=none", "key not used by family csa4.chain in token 'at=none'"},
      {HEAD DIMS "bias=none sink=zero scale=none", "missing key 'seed'"},
      {"family=csa4.bogus op=CompressedSparseAttention", "bad value in token 'family=csa4.bogus'"},
      {"family=csa4.chain op=CompressedSparseAttention ratio=128 " DIMS "bias=none " TAIL,
       "bad value in token 'ratio=128'"},
      {HEAD "b=1 heads=2 iheads=4 topk=7 window=128 start=5 prefill=3 decode=2 cap=2 outputs=5 bias=none " TAIL,
       "inconsistent token 'start=5'"},
      {HEAD "b=1 heads=2 iheads=4 topk=7 window=128 start=0 prefill=8 decode=2 cap=1 outputs=5 bias=none " TAIL,
       "inconsistent token 'cap=1'"},
      {HEAD DIMS "bias=1x2x3x135 " TAIL, "inconsistent token 'bias=1x2x3x135'"},
      {HEAD DIMS "bias=129 " TAIL, "inconsistent token 'bias=129'"},
      {HEAD DIMS "bias=1x1x1x135 " TAIL, NULL},
      {"family=csa4.state op=CompressedSparseAttention ratio=4 " DIMS "bias=none " TAIL,
       "inconsistent token 'start=0'"},
      {"family=csa4.tiles op=CompressedSparseAttention ratio=4 " DIMS "bias=none " TAIL, NULL},
      {"family=csa4.tiles op=CompressedSparseAttention ratio=4 b=1 heads=2 iheads=4 topk=7 window=128 start=5 "
       "prefill=3 decode=2 cap=2 outputs=5 bias=none " TAIL,
       "inconsistent token 'start=5'"},
      {"family=csa4.tiles op=CompressedSparseAttention ratio=4 " DIMS "bias=none " TAIL " ties=relu",
       "key not used by family csa4.tiles in token 'ties=relu'"},
      {TIES "ties=dup seed=1", NULL},
      {TIES "ties=none seed=1", "bad value in token 'ties=none'"},
      {TIES "seed=1", "missing key 'ties'"},
      {CONTRACT("0", "none", "contract=shape at=in15"), NULL},
      {CONTRACT("0", "none", "contract=shape at=in9"), "inconsistent token 'at=in9'"},
      {CONTRACT("0", "none", "contract=shape at=in20"), "bad value in token 'at=in20'"},
      {CONTRACT("0", "none", "contract=output_shape at=out5"), "inconsistent token 'at=out5'"},
      {CONTRACT("0", "none", "contract=output_shape at=out6"), "bad value in token 'at=out6'"},
      {CONTRACT("0", "none", "contract=scale at=in0"), "inconsistent token 'at=in0'"},
      {CONTRACT("0", "none", "contract=scale at=none"), NULL},
      {CONTRACT("0", "none", "contract=scale"), "missing key 'at'"},
      {CONTRACT("0", "none", "contract=fp4_format at=none"), "inconsistent token 'contract=fp4_format'"},
      {CONTRACT("0", "none", "contract=ratio4_input at=in11"), "inconsistent token 'contract=ratio4_input'"},
      {CONTRACT("0", "none", "contract=bias_dtype at=in19"), "inconsistent token 'contract=bias_dtype'"},
      {CONTRACT("0", "[]", "contract=bias_dtype at=in19"), NULL},
      {CONTRACT("0", "none", "contract=past_capacity at=in17"), "inconsistent token 'contract=past_capacity'"},
      {CONTRACT("8", "none", "contract=past_capacity at=in17"), NULL},
      {CONTRACT("8", "none", "contract=past_capacity at=in7"), "inconsistent token 'at=in7'"},
      {CONTRACT("0", "none", "contract=none at=none"), "bad value in token 'contract=none'"},
      {"family=csa4.contract op=CompressedSparseAttention ratio=4 " DIMS "bias=none " TAIL " contract=scale at=none",
       "inconsistent token 'decode=2'"},
  };
  csa_test_expect_parse_rows(rows, sizeof rows / sizeof rows[0], parse4);
}

/* ------------------------------------------------- what the suite holds */

/* A contract site as an array slot: none 0, inputs 1..20, outputs 21..26. */
static int site_slot(int site) { return site < 0 ? 0 : site < 100 ? site + 1 : 21 + site - 100; }

/* The brief's list (issue "ratio 4"), each item counted over the suite. */
Test(csa4_spec, suite_covers_the_families_and_boundaries) {
  static const long long prefills[] = {1, 3, 4, 5, 127, 520}, topks[] = {1, 7, 512}, iheads[] = {1, 4, 64};
  spec_set s = csa4_generated_suite();
  int fam[CSA4_FAMILY_COUNT] = {0}, seen_prefill[6] = {0}, seen_topk[3] = {0}, seen_ih[3] = {0};
  int ties[CSA4_TIE_COUNT] = {0}, sinks[CSA_SINK_COUNT] = {0}, outputs[2] = {0};
  int long_chain = 0, batch = 0, padded = 0, cand1 = 0, cand_full = 0, full = 0, spare = 0, at_2_16 = 0;
  int sites[CSA4_SITES_MAX], code, i, k;
  int seen_site[CSA_CONTRACT_COUNT][32] = {{0}};
  for (i = 0; i < s.n; i++) {
    csa4_case c = csa4_parse_or_die(s.v[i]);
    long long final_total = c.start + c.prefill + c.decode, d4_last;
    fam[c.family]++;
    outputs[c.outputs - 5]++;
    if (c.family == CSA4_FAMILY_CONTRACT) {
      seen_site[c.contract][site_slot(c.contract_site)]++;
      continue;
    }
    for (k = 0; k < 6; k++) seen_prefill[k] += c.family == CSA4_FAMILY_CHAIN && c.prefill == prefills[k];
    for (k = 0; k < 3; k++) seen_topk[k] += c.topk == topks[k], seen_ih[k] += c.index_heads == iheads[k];
    ties[c.ties]++;
    sinks[c.sink]++;
    long_chain += c.decode >= 40;
    batch += c.batch > 1;
    padded += c.topk > final_total / 4;
    d4_last = c.bias_rank > 0 ? c.bias_shape[c.bias_rank - 1] : 1;
    cand1 += c.bias_rank >= 0 && d4_last == 1;
    cand_full += c.bias_rank > 0 && d4_last == 128 + c.topk;
    full += c.capacity == final_total / 4;
    spare += c.capacity > final_total / 4;
    at_2_16 += c.family == CSA4_FAMILY_STATE && c.start == 65536;
    /* The cost rules: long chains stay small, the big widths come with short chains, 2^16 starts with B = 1. */
    if (c.decode >= 40) cr_expect(c.batch <= 2 && c.index_heads <= 4, "long chain too wide: %s", s.v[i]);
    if (c.family == CSA4_FAMILY_CHAIN && (c.index_heads == 64 || c.topk == 512) && c.decode > 4)
      cr_expect(c.index_heads <= 4, "IH 64 on a long chain: %s", s.v[i]);
    if (c.start >= 65536) cr_expect(c.batch == 1 && c.heads <= 2 && c.decode <= 4, "big state: %s", s.v[i]);
  }
  for (k = 0; k < 6; k++) cr_expect(seen_prefill[k] > 0, "no chain with prefill %lld", prefills[k]);
  for (k = 0; k < 3; k++)
    cr_expect(seen_topk[k] > 0 && seen_ih[k] > 0, "topk %lld or IH %lld missing", topks[k], iheads[k]);
  for (k = CSA4_TIE_RELU; k < CSA4_TIE_COUNT; k++) cr_expect(ties[k] > 0, "no ties=%s case", cases_csa4_tie_name(k));
  for (k = 0; k < CSA_SINK_COUNT; k++) cr_expect(sinks[k] > 0);
  cr_expect(outputs[0] && outputs[1] && long_chain >= 10 && batch && padded && cand1 && cand_full && full && spare &&
            at_2_16);
  for (k = 0; k < CSA4_FAMILY_COUNT; k++)
    cr_expect(fam[k] > 0, "no %s case", cases_csa4_family_name((csa4_family)k));
  /* csa4.contract: every site of every code that applies to ratio 4. */
  for (code = 1; code < CSA_CONTRACT_COUNT; code++) {
    int n = cases_csa4_contract_sites(code, 6, 1, sites);
    cr_expect(n > 0 || !csa_case_contract_applies(code, CSA4_RATIO), "%s has no site", csa_contract_name(code));
    for (k = 0; k < n; k++)
      cr_expect(seen_site[code][site_slot(sites[k])] > 0, "no csa4.contract case for %s at site %d",
                csa_contract_name(code), sites[k]);
  }
  printf("csa4 gate suite: %d specs: chain %d, state %d, ties %d, contract %d, tiles %d; %d chains of >= 40 decode "
         "steps\n",
         s.n, fam[0], fam[1], fam[2], fam[3], fam[4], long_chain);
  spec_set_free(&s);
}

/* ------------------------------------------------------------- tensors */

static const float *row_f32(const tensor *t, long long b, long long r) {
  long long w = tensor_numel(t) / (t->shape[0] * t->shape[1]);
  return (const float *)t->data + (b * t->shape[1] + r) * w;
}

Test(csa4_tensors, materialize_is_deterministic_and_threads_the_past) {
  static const char *specs[] = {
      "family=csa4.state op=CompressedSparseAttention ratio=4 b=2 heads=2 iheads=4 topk=7 window=100 start=13 "
      "prefill=3 decode=2 cap=5 outputs=6 bias=2x1x1x135 sink=rand scale=0x1p-4 seed=11",
      CANON,
  };
  static const int threaded[4][2] = {{CSA_IN_PAST_COMPRESSED_KV, CSA_OUT_PRESENT_COMPRESSED_KV},
                                     {CSA_IN_PAST_CARRY, CSA_OUT_PRESENT_CARRY},
                                     {CSA_IN_PAST_INDEX_KEY, CSA_OUT_PRESENT_INDEX_KEY},
                                     {CSA_IN_PAST_INDEX_CARRY, CSA_OUT_PRESENT_INDEX_CARRY}};
  static const int per_position[] = {CSA_IN_QUERY,       CSA_IN_COMPRESSOR_KV, CSA_IN_COMPRESSOR_GATE,
                                     CSA_IN_INDEX_QUERY, CSA_IN_INDEX_WEIGHT,  CSA_IN_INDEX_KV,
                                     CSA_IN_INDEX_GATE};
  size_t k, j;
  for (k = 0; k < sizeof specs / sizeof specs[0]; k++) {
    csa4_case c = csa4_parse_or_die(specs[k]);
    csa4_step_tensors a, b, n;
    char err[256];
    long long bb;
    int i;
    cr_assert_eq(csa4_step_make(&c, 0, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(csa4_step_make(&c, 0, &b, err, sizeof err), 0, "%s", err);
    cr_assert_eq(a.n_in, CSA_INPUT_COUNT);
    cr_assert_eq(a.n_out, c.outputs);
    for (i = 0; i < CSA_INPUT_COUNT; i++) cr_assert(csa_tensors_equal(&a.in[i], &b.in[i]), "input %d differs", i);
    for (i = 0; i < CSA_OUTPUT_MAX; i++) cr_assert(csa_tensors_equal(&a.out[i], &b.out[i]), "output %d differs", i);
    cr_assert_eq(csa4_step_make(&c, 1, &n, err, sizeof err), 0, "%s", err);
    /* Step 1: the four pasts are left to the harness, shaped like step 0's presents. */
    for (j = 0; j < 4; j++) {
      const tensor *past = &n.in[threaded[j][0]], *present = &a.out[threaded[j][1]];
      cr_assert_null(past->data, "input %d has data at step 1", threaded[j][0]);
      cr_assert(past->dt == present->dt && past->rank == present->rank &&
                    !memcmp(past->shape, present->shape, sizeof past->shape),
                "input %d is not shaped like output %d", threaded[j][0], threaded[j][1]);
    }
    /*
    ** Token streams are per position: step 1's one token is the last token
    ** of a step 0 one token longer (the same case with prefill + 1).
    */
    {
      csa4_case longer = c;
      csa4_step_tensors l;
      longer.prefill++, longer.decode = 0, longer.bias_rank = -1;
      cr_assert_eq(csa4_step_make(&longer, 0, &l, err, sizeof err), 0, "%s", err);
      for (j = 0; j < sizeof per_position / sizeof per_position[0]; j++) {
        const tensor *t1 = &n.in[per_position[j]], *tl = &l.in[per_position[j]];
        long long w = tensor_numel(t1) / (t1->shape[0] * t1->shape[1]);
        cr_assert_eq(t1->shape[1], 1);
        for (bb = 0; bb < t1->shape[0]; bb++)
          cr_assert(!memcmp(row_f32(t1, bb, 0), row_f32(tl, bb, tl->shape[1] - 1), (size_t)w * sizeof(float)),
                    "input %d: step 1's token is not the position's token", per_position[j]);
      }
      cases_csa4_release(l.in, l.out);
    }
    {
      const tensor *k0 = &a.in[CSA_IN_CURRENT_KV], *k1 = &n.in[CSA_IN_CURRENT_KV];
      long long L0 = k0->shape[1], L1 = k1->shape[1];
      cr_assert(L1 == L0 || L1 == L0 + 1);
      for (bb = 0; bb < k0->shape[0]; bb++)
        cr_assert(!memcmp(row_f32(k1, bb, L1 - 2), row_f32(k0, bb, L0 - 1), CSA_HEAD_DIM * sizeof(float)),
                  "token total-1 of step 0 is not token total-2 of step 1");
    }
    cases_csa4_release(a.in, a.out);
    cases_csa4_release(b.in, b.out);
    cases_csa4_release(n.in, n.out);
  }
}

/* Start 13: records 0..2 of both caches synthetic, 3..5 zero; carry slots 0..3 and 4 live. */
Test(csa4_tensors, synthetic_past_is_valid_and_reachable) {
  const char *spec = "family=csa4.state op=CompressedSparseAttention ratio=4 b=2 heads=1 iheads=1 topk=1 window=128 "
                     "start=13 prefill=1 decode=1 cap=6 outputs=5 bias=none sink=zero scale=none seed=4";
  csa4_case c = csa4_parse_or_die(spec);
  csa4_step_tensors t;
  char err[256];
  long long b, k;
  int d, j;
  cr_assert_eq(csa4_step_make(&c, 0, &t, err, sizeof err), 0, "%s", err);
  for (b = 0; b < 2; b++)
    for (k = 0; k < 6; k++) {
      const nx_u8 *main = (const nx_u8 *)t.in[CSA_IN_PAST_COMPRESSED_KV].data + (b * 6 + k) * CSA_FP8_RECORD_BYTES;
      const nx_u8 *key = (const nx_u8 *)t.in[CSA_IN_PAST_INDEX_KEY].data + (b * 6 + k) * CSA4_INDEX_RECORD_BYTES;
      int nonzero = 0;
      for (d = 0; d < CSA_HEAD_DIM; d++) {
        float v = nx_csa_fp8_record_value(main, d);
        cr_assert(v >= -3.5f && v <= 3.5f, "main record %lld dim %d is %a", k, d, (double)v);
        nonzero += v != 0.0f;
      }
      for (d = 0; d < CSA4_INDEX_DIM; d++) {
        float v = nx_csa_fp4_record_value(key, d);
        cr_assert(v >= -3.5f && v <= 3.5f, "index record %lld dim %d is %a", k, d, (double)v);
        nonzero += v != 0.0f;
      }
      if (k < 3)
        cr_assert(nonzero > 500, "record %lld of row %lld is nearly empty", k, b);
      else
        for (d = 0; d < CSA_FP8_RECORD_BYTES; d++) cr_assert_eq(main[d], 0, "spare record %lld has bytes", k);
    }
  for (j = 0; j < CSA4_SLOTS; j++) {
    const float *main = (const float *)t.in[CSA_IN_PAST_CARRY].data + 2 * j * CSA4_SOURCE_WIDTH;
    const float *index = (const float *)t.in[CSA_IN_PAST_INDEX_CARRY].data + 2 * j * CSA4_INDEX_SOURCE;
    int live = j <= 4;
    cr_assert_eq(nx_f32_bits(main[CSA4_SOURCE_WIDTH]) != 0xff800000u, live, "main slot %d score %a", j,
                 (double)main[CSA4_SOURCE_WIDTH]);
    cr_assert_eq(nx_f32_bits(index[CSA4_INDEX_SOURCE]) != 0xff800000u, live, "index slot %d", j);
    if (!live) cr_assert_eq(nx_f32_bits(main[0]), 0u, "dead slot %d kv is not +0", j);
  }
  cases_csa4_release(t.in, t.out);
}

/* The crafted index streams of csa4.ties hold what csa4_materialize.c says. */
Test(csa4_tensors, tie_modes_craft_their_index_streams) {
  const char *base = "family=csa4.ties op=CompressedSparseAttention ratio=4 b=1 heads=1 iheads=2 topk=1 window=128 "
                     "start=0 prefill=16 decode=0 cap=4 outputs=5 bias=none sink=zero scale=none ties=%s seed=9";
  char spec[512], err[256];
  csa4_step_tensors t;
  csa4_case c;
  long long pos, e;
  int negative_zero = 0;
  /* relu: key sources positive in the unrotated dims, zero in the rotated ones; queries negative. */
  snprintf(spec, sizeof spec, base, "relu");
  c = csa4_parse_or_die(spec);
  cr_assert_eq(csa4_step_make(&c, 0, &t, err, sizeof err), 0, "%s", err);
  for (pos = 0; pos < 16; pos++) {
    for (e = 0; e < CSA4_INDEX_SOURCE; e++) {
      float v = row_f32(&t.in[CSA_IN_INDEX_KV], 0, pos)[e];
      cr_assert(e % 128 < 64 ? v > 0.0f : v == 0.0f, "pos %lld source %lld: %a", pos, e, (double)v);
    }
    for (e = 0; e < 2 * CSA4_INDEX_DIM; e++) {
      float v = row_f32(&t.in[CSA_IN_INDEX_QUERY], 0, pos)[e];
      cr_assert(e % 128 < 64 ? v < 0.0f : v == 0.0f, "pos %lld query %lld: %a", pos, e, (double)v);
    }
  }
  cases_csa4_release(t.in, t.out);
  /* dup: every block repeats block 0, phase by phase. */
  snprintf(spec, sizeof spec, base, "dup");
  c = csa4_parse_or_die(spec);
  cr_assert_eq(csa4_step_make(&c, 0, &t, err, sizeof err), 0, "%s", err);
  for (pos = 4; pos < 16; pos++) {
    cr_assert(!memcmp(row_f32(&t.in[CSA_IN_INDEX_KV], 0, pos), row_f32(&t.in[CSA_IN_INDEX_KV], 0, pos % 4),
                      CSA4_INDEX_SOURCE * sizeof(float)));
    cr_assert(!memcmp(row_f32(&t.in[CSA_IN_INDEX_GATE], 0, pos), row_f32(&t.in[CSA_IN_INDEX_GATE], 0, pos % 4),
                      CSA4_INDEX_SOURCE * sizeof(float)));
  }
  cases_csa4_release(t.in, t.out);
  /* zero: even positions' weights and odd positions' queries are signed zeros, both signs used. */
  snprintf(spec, sizeof spec, base, "zero");
  c = csa4_parse_or_die(spec);
  cr_assert_eq(csa4_step_make(&c, 0, &t, err, sizeof err), 0, "%s", err);
  for (pos = 0; pos < 16; pos++) {
    const float *x = pos % 2 ? row_f32(&t.in[CSA_IN_INDEX_QUERY], 0, pos) : row_f32(&t.in[CSA_IN_INDEX_WEIGHT], 0, pos);
    for (e = 0; e < (pos % 2 ? 2 * CSA4_INDEX_DIM : 2); e++) {
      cr_assert_eq(nx_f32_bits(x[e]) & 0x7fffffffu, 0u, "pos %lld element %lld: %a", pos, e, (double)x[e]);
      negative_zero += nx_f32_bits(x[e]) != 0u;
    }
  }
  cr_assert(negative_zero > 0, "no -0 drawn");
  cases_csa4_release(t.in, t.out);
}

Test(csa4_tensors, budget_refusal) {
  const char *big = "family=csa4.state op=CompressedSparseAttention ratio=4 b=64 heads=1 iheads=1 topk=1 window=128 "
                    "start=1048576 prefill=1 decode=1 cap=262145 outputs=5 bias=none sink=zero scale=none seed=1";
  csa4_case c = csa4_parse_or_die(big);
  csa4_step_tensors t;
  char err[256] = "";
  int i;
  cr_assert_eq(csa4_step_make(&c, 0, &t, err, sizeof err), -1);
  cr_assert(strstr(err, "over the budget of"), "%s", err);
  for (i = 0; i < CSA_INPUT_COUNT; i++) cr_assert_null(t.in[i].data);
  for (i = 0; i < CSA_OUTPUT_MAX; i++) cr_assert_null(t.out[i].data);
  c.batch = 1, c.start = 8, c.capacity = 3; /* small, but over a tiny budget */
  c.budget_bytes = 1024;
  cr_assert_eq(csa4_step_make(&c, 0, &t, err, sizeof err), -1);
  cr_assert(strstr(err, "case needs"), "%s", err);
  cr_assert_eq(csa4_step_make(&c, 2, &t, err, sizeof err), -1);
  cr_assert(strstr(err, "outside the case's 2 steps"), "%s", err);
}

/* --------------------------------------------------------- the corpus */

Test(csa4_corpus, gate_suite_holds_the_generated_lines) {
  spec_set gen = csa4_generated_suite();
  csa_test_expect_corpus(&gen, "gate", "family=csa4.", "ratio-4");
  spec_set_free(&gen);
}

Test(csa4_corpus, nightly_suite_holds_the_generated_lines) {
  spec_set gen = csa_test_generated_nightly(cases_csa4_write_nightly, "ratio-4");
  csa_test_expect_corpus(&gen, "nightly", "family=csa4.", "ratio-4");
  spec_set_free(&gen);
}
