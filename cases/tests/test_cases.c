/*
** test_cases.c: the IndexShare case generator (cases/index_share_cases.h)
** and the counter-based generator (cases/rng.h).
**
** Every check that needs the operator asks the oracle's own validation
** (index_share_validate, index_share_capacity_frontier,
** index_share_validate_indices), so a case is judged by the specification,
** not by a second copy of its rules.  Failures print the spec, so a failing
** case can be rebuilt from this output alone.
*/
#include "cases/case_spec.h"
#include "cases/index_share_cases.h"
#include "cases/rng.h"
#include "oracle/numerics/numerics.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/* ------------------------------------------------------------ helpers */

#include "spec_set.h"

/* Splits text into lines, skipping blanks and '#' comments. */
static void spec_set_from_text(spec_set *s, char *text) {
  char *line, *save = NULL;
  for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
    if (line[0] && line[0] != '#') spec_set_push(line, s);
}

/* The specs write puts out, at least min of them (suite names them in the message). */
static spec_set written_suite(int (*write)(FILE *out), int min, const char *suite) {
  spec_set s = {0};
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  int n = write(f);
  fclose(f);
  cr_assert(n >= min, "the %s suite has %d IndexShare specs, want >= %d", suite, n, min);
  spec_set_from_text(&s, text);
  free(text);
  cr_assert_eq(s.n, n);
  return s;
}

static int write_gate(FILE *out) { return cases_is_write_suite(out, 1); }

/* The gate suite as cases_is_write_suite writes it; the nightly suite as cases_is_write_nightly does. */
static spec_set generated_suite(void) { return written_suite(write_gate, 1100, "gate"); }
static spec_set generated_nightly(void) { return written_suite(cases_is_write_nightly, 2000, "nightly"); }

static is_case parse_or_die(const char *spec) {
  is_case c;
  char err[512];
  cr_assert_eq(cases_is_parse(spec, &c, err, sizeof err), 0, "parse failed: %s\n  %s", err, spec);
  return c;
}

/* One materialized step, with the pointer arrays the oracle takes. */
typedef struct step_tensors {
  tensor in[IS_CASE_MAX_INPUTS], out[IS_OUTPUT_COUNT];
  const tensor *in_p[IS_CASE_MAX_INPUTS], *out_p[IS_OUTPUT_COUNT];
  int n_in, n_out;
  index_share_attrs attrs;
} step_tensors;

static void materialize_or_die(const is_case *c, int step, step_tensors *t, const char *spec) {
  char err[512];
  int i;
  cr_assert_eq(cases_is_materialize(c, step, t->in, &t->n_in, t->out, &t->n_out, &t->attrs, err, sizeof err), 0,
               "materialize step %d failed: %s\n  %s", step, err, spec);
  for (i = 0; i < IS_CASE_MAX_INPUTS; i++) t->in_p[i] = &t->in[i];
  for (i = 0; i < IS_OUTPUT_COUNT; i++) t->out_p[i] = &t->out[i];
}

/* Digest of every input and output byte, with dtypes and shapes. */
static uint64_t step_digest(const step_tensors *t) {
  XXH3_state_t *st = XXH3_createState();
  uint64_t h;
  int i;
  XXH3_64bits_reset(st);
  for (i = 0; i < IS_CASE_MAX_INPUTS + IS_OUTPUT_COUNT; i++) {
    const tensor *x = i < IS_CASE_MAX_INPUTS ? &t->in[i] : &t->out[i - IS_CASE_MAX_INPUTS];
    XXH3_64bits_update(st, &x->dt, sizeof x->dt);
    XXH3_64bits_update(st, &x->rank, sizeof x->rank);
    XXH3_64bits_update(st, x->shape, sizeof x->shape);
    if (x->data) XXH3_64bits_update(st, x->data, tensor_bytes(x));
  }
  XXH3_64bits_update(st, &t->n_in, sizeof t->n_in);
  XXH3_64bits_update(st, &t->n_out, sizeof t->n_out);
  h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return h;
}

static int all_valid_lengths_positive(const is_case *c) {
  int b;
  for (b = 0; c->capacity && b < c->batch; b++)
    if (c->valid_len[b] == 0) return 0;
  return 1;
}

static int bias_broadcastable(const is_case *c) {
  long long target[4] = {c->batch, c->num_heads, c->q_seq, c->capacity ? c->past_seq : c->past_seq + c->current_seq};
  int a;
  for (a = 0; a < c->bias_rank; a++) {
    long long d = c->bias_shape[a], want = target[4 - c->bias_rank + a];
    if (d != 1 && d != want) return 0;
  }
  return 1;
}

/* Rows (b, h, q) of the output whose selected keys all have a -inf bias. */
static long long fully_masked_rows(const index_share_dims *d, const tensor *bias, const tensor *ix) {
  long long b, h, q, col, n = 0;
  for (b = 0; b < d->batch; b++)
    for (h = 0; h < d->q_heads; h++)
      for (q = 0; q < d->q_seq; q++) {
        long long ih = d->index_heads == 1 ? 0 : h, base = ((b * d->index_heads + ih) * d->q_seq + q) * d->selected_width;
        int all = 1;
        for (col = 0; col < d->selected_width; col++) {
          long long key = tensor_load_index(ix, base + col);
          float v;
          if (key < 0) break;
          v = tensor_load_f32(bias, index_share_bias_offset(d, b, h, q, key));
          if (nx_f32_bits(v) != 0xff800000u) all = 0;
        }
        n += all;
      }
  return n;
}

/* ------------------------------------------------------------------ rng */

Test(cases_rng, pinned_values) {
  /* The generator is frozen: case ids name data, so these never change. */
  cr_expect_eq(cases_rng_u64(0, 0, 0, 0), 0x238275bc38fcbe91ull, "got %#llx", (unsigned long long)cases_rng_u64(0, 0, 0, 0));
  cr_expect_eq(cases_rng_u64(7, 1, 2, 3), 0xffd113e090b523acull, "got %#llx", (unsigned long long)cases_rng_u64(7, 1, 2, 3));
  cr_expect_eq(cases_rng_u64(~0ull, 0xffffffffu, 0xffffffffu, ~0ull), 0x595b17f487c0e71bull, "got %#llx",
               (unsigned long long)cases_rng_u64(~0ull, 0xffffffffu, 0xffffffffu, ~0ull));
}

Test(cases_rng, every_key_word_matters) {
  uint64_t base = cases_rng_u64(1, 2, 3, 4);
  cr_expect_neq(base, cases_rng_u64(0, 2, 3, 4));
  cr_expect_neq(base, cases_rng_u64(1, 3, 3, 4));
  cr_expect_neq(base, cases_rng_u64(1, 2, 4, 4));
  cr_expect_neq(base, cases_rng_u64(1, 2, 3, 5));
  cr_expect_neq(cases_rng_u64(1, 2, 3, 4), cases_rng_u64(1, 3, 2, 4), "stream and step must not commute");
}

Test(cases_rng, helpers_stay_in_range) {
  long long seen_lo = 0, seen_hi = 0;
  uint64_t i;
  for (i = 0; i < 100000; i++) {
    uint64_t bits = cases_rng_u64(42, 0, 0, i);
    float u = cases_rng_uniform(bits, -2.0f, 3.0f), g = cases_rng_normalish(bits);
    long long k = cases_rng_range(bits, -3, 4);
    cr_assert(u >= -2.0f && u < 3.0f, "uniform %a", (double)u);
    cr_assert(g >= -3.4641018f && g <= 3.4641018f, "normalish %a", (double)g);
    cr_assert(k >= -3 && k <= 4, "range %lld", k);
    seen_lo += k == -3, seen_hi += k == 4;
  }
  cr_expect(seen_lo > 10000 && seen_hi > 10000, "range ends drawn %lld and %lld times", seen_lo, seen_hi);
  cr_expect_eq(cases_rng_range(5, 9, 9), 9);
}

/* ------------------------------------------------------- spec grammar */

Test(cases_spec, round_trip_every_family) {
  static const char *const families[] = {"is.valid",  "is.indexviol", "is.bias",    "is.capfront",
                                         "is.masked", "is.contract",  "is.numeric", "is.tiles"};
  int f, i;
  for (f = 0; f < 8; f++) {
    spec_set s = {0};
    int combos = cases_is_family_combos(families[f]);
    cr_assert(combos > 0);
    cr_assert_eq(cases_is_enumerate(families[f], 2 * combos, 12345, spec_set_push, &s), 2 * combos);
    for (i = 0; i < s.n; i++) {
      char again[IS_CASE_SPEC_MAX], id[CASE_ID_MAX], id2[CASE_ID_MAX];
      is_case c = parse_or_die(s.v[i]), c2;
      cr_assert_eq(cases_is_format(&c, again, sizeof again), 0);
      cr_assert_str_eq(again, s.v[i], "format(parse(spec)) differs");
      c2 = parse_or_die(again);
      cr_assert_eq(memcmp(&c, &c2, sizeof c), 0, "parse(format(c)) != c for %s", s.v[i]);
      cr_assert_eq(cases_is_id(&c, id, sizeof id), 0);
      cr_assert_eq(case_id_from_spec(s.v[i], id2, sizeof id2), 0);
      cr_assert_str_eq(id, id2);
      cr_assert_eq(strncmp(id, families[f], strlen(families[f])), 0, "id %s", id);
    }
    spec_set_free(&s);
  }
  cr_expect_eq(cases_is_enumerate("is.nope", 3, 1, spec_set_push, NULL), -1);
}

Test(cases_spec, scale_text_is_printf_hex) {
  /* The scale's canonical text is written without printf; it must still be
  ** exactly C99 "%a" of the widened float (checked here on glibc). */
  const char *head = "family=is.valid op=IndexShare dtype=f32 idx=i32 b=1 n=1 nkv=none sq=1 sc=1 sp=0 h=4 ih=1 k=1 "
                     "out=1 present=grow vlen=none bias=none scale=";
  uint64_t i;
  for (i = 0; i < 20000; i++) {
    uint32_t bits = (uint32_t)cases_rng_u64(9, 9, 9, i) & 0x7fffffffu;
    float f;
    char spec[IS_CASE_SPEC_MAX], want[64], got[IS_CASE_SPEC_MAX];
    is_case c;
    if (i < 4) bits = (uint32_t[]){0x3f800000u, 0x00000001u, 0x007fffffu, 0x7f7fffffu}[i];
    if ((bits & 0x7f800000u) == 0x7f800000u || bits == 0) continue;
    memcpy(&f, &bits, sizeof f);
    snprintf(want, sizeof want, "%a", (double)f);
    snprintf(spec, sizeof spec, "%s%s seed=1 steps=1", head, want);
    c = parse_or_die(spec);
    cr_assert(c.has_scale && c.scale == f);
    cr_assert_eq(cases_is_format(&c, got, sizeof got), 0);
    cr_assert_str_eq(got, spec);
  }
}

Test(cases_spec, tokens_in_any_order_format_canonically) {
  const char *canon = "family=is.valid op=IndexShare dtype=f16 idx=i32 b=2 n=4 nkv=2 sq=1 sc=1 sp=17 h=32 ih=1 k=8 "
                      "out=3 present=grow vlen=none bias=2x1x1x18 scale=none seed=7 steps=4";
  const char *shuffled = "seed=7 steps=4 family=is.valid op=IndexShare  dtype=f16 idx=i32 b=2 n=4 nkv=2 sq=1 sc=1 "
                         "sp=17 h=32 ih=1 k=8 out=3 present=grow vlen=none bias=2x1x1x18 scale=none";
  char out[IS_CASE_SPEC_MAX];
  is_case c = parse_or_die(shuffled);
  cr_assert_eq(cases_is_format(&c, out, sizeof out), 0);
  cr_expect_str_eq(out, canon);
}

typedef struct bad_spec {
  const char *spec, *message;
  int line;
} bad_spec;
#define B(spec, message) {spec, message, __LINE__}
#define BASE_HEAD "family=is.valid op=IndexShare dtype=f32 idx=i64 b=2 n=4 nkv=2 sq=2 sc=2 sp=6 h=8 ih=1 k=4 "
#define BASE_TAIL " seed=1 steps=2"
#define BASE_PRESENT "out=1 present=grow vlen=none bias=none scale=none"

Test(cases_spec, errors_name_the_token) {
  static const bad_spec bad[] = {
      B(BASE_HEAD BASE_PRESENT BASE_TAIL " k=abc", "repeated key in token 'k=abc'"),
      B("family=is.valid op=IndexShare dtype=f32 idx=i64 b=2 n=4 nkv=2 sq=2 sc=2 sp=6 h=8 ih=1 k=abc " BASE_PRESENT
            BASE_TAIL,
        "bad value in token 'k=abc'"),
      B(BASE_HEAD BASE_PRESENT BASE_TAIL " colour=red", "unknown key in token 'colour=red'"),
      B(BASE_HEAD BASE_PRESENT BASE_TAIL " masked=2", "key not used by family is.valid in token 'masked=2'"),
      B(BASE_HEAD BASE_PRESENT BASE_TAIL " oops", "malformed token 'oops'"),
      B(BASE_HEAD "out=1 present=grow vlen=none bias=none seed=1 steps=2", "missing key 'scale'"),
      B("op=IndexShare dtype=f32", "missing key 'family'"),
      B("family=is.bogus op=IndexShare dtype=f32", "bad value in token 'family=is.bogus'"),
      B("family=is.valid op=IndexShare dtype=i32 idx=i64 b=2 n=4 nkv=2 sq=2 sc=2 sp=6 h=8 ih=1 k=4 " BASE_PRESENT BASE_TAIL,
        "bad value in token 'dtype=i32'"),
      B("family=is.valid op=IndexShare dtype=f32 idx=i64 b=02 n=4 nkv=2 sq=2 sc=2 sp=6 h=8 ih=1 k=4 " BASE_PRESENT
            BASE_TAIL,
        "bad value in token 'b=02'"),
      B(BASE_HEAD "out=1 present=grow vlen=none bias=none scale=0.125" BASE_TAIL, "bad value in token 'scale=0.125'"),
      B(BASE_HEAD "out=1 present=grow vlen=none bias=none scale=-0x1p+0" BASE_TAIL, "bad value in token 'scale=-0x1p+0'"),
      B(BASE_HEAD "out=2 present=grow vlen=none bias=none scale=none" BASE_TAIL, "bad value in token 'out=2'"),
      B(BASE_HEAD "out=1 present=grow vlen=none bias=1x2x3x4x5 scale=none" BASE_TAIL,
        "bad value in token 'bias=1x2x3x4x5'"),
      B(BASE_HEAD "out=1 present=grow vlen=none bias=2x3x2x8 scale=none" BASE_TAIL,
        "inconsistent token 'bias=2x3x2x8': does not broadcast"),
      B(BASE_HEAD "out=3 present=cap vlen=3,4 bias=none scale=none" BASE_TAIL,
        "inconsistent token 'present=cap': a capacity present needs a bias"),
      B(BASE_HEAD "out=3 present=cap vlen=3 bias=2x1x1x6 scale=none" BASE_TAIL,
        "inconsistent token 'vlen=3': needs one entry per batch"),
      B(BASE_HEAD "out=3 present=cap vlen=3,7 bias=2x1x1x6 scale=none" BASE_TAIL,
        "inconsistent token 'vlen=3,7': 7 is above the capacity"),
      B(BASE_HEAD "out=3 present=cap vlen=3,4 bias=1x1x6 scale=none" BASE_TAIL,
        "inconsistent token 'vlen=3,4': the bias broadcasts over batch"),
      B(BASE_HEAD "out=3 present=cap vlen=0,4 bias=2x1x1x6 scale=none" BASE_TAIL,
        "inconsistent token 'vlen=0,4': a valid length of 0 only belongs in is.capfront"),
      B("family=is.valid op=IndexShare dtype=f32 idx=i64 b=2 n=4 nkv=3 sq=2 sc=2 sp=6 h=8 ih=1 k=4 " BASE_PRESENT BASE_TAIL,
        "inconsistent token 'nkv=3': does not divide n=4"),
      B("family=is.valid op=IndexShare dtype=f32 idx=i64 b=2 n=4 nkv=2 sq=2 sc=2 sp=6 h=8 ih=2 k=4 " BASE_PRESENT BASE_TAIL,
        "inconsistent token 'ih=2'"),
      B("family=is.indexviol op=IndexShare dtype=f32 idx=i64 b=2 n=4 nkv=2 sq=2 sc=2 sp=6 h=8 ih=1 k=4 " BASE_PRESENT
        " viol=duplicate:0,0,0,0" BASE_TAIL,
        "inconsistent token 'viol=duplicate:0,0,0,0': cannot be planted"),
      B("family=is.indexviol op=IndexShare dtype=f32 idx=i64 b=2 n=4 nkv=2 sq=2 sc=2 sp=6 h=8 ih=1 k=4 " BASE_PRESENT
        " viol=teleport:0,0,0,1" BASE_TAIL,
        "bad value in token 'viol=teleport:0,0,0,1'"),
      B("family=is.contract op=IndexShare dtype=f32 idx=i64 b=2 n=4 nkv=2 sq=2 sc=2 sp=6 h=8 ih=1 k=4 " BASE_PRESENT
        " contract=rank:bias" BASE_TAIL,
        "inconsistent token 'contract=rank:bias': rank cannot target bias"),
      B("family=is.contract op=IndexShare dtype=f32 idx=i64 b=2 n=4 nkv=2 sq=2 sc=2 sp=6 h=8 ih=1 k=4 " BASE_PRESENT
        " contract=dtype:key:f32" BASE_TAIL,
        "inconsistent token 'contract=dtype:key:f32'"),
      B("family=is.numeric op=IndexShare dtype=f32 idx=i64 b=2 n=4 nkv=2 sq=2 sc=2 sp=6 h=8 ih=1 k=4 " BASE_PRESENT
        " num=nan num_in=vq num_rate=5" BASE_TAIL,
        "bad value in token 'num_in=vq'"),
      B(BASE_HEAD BASE_PRESENT " seed=1 steps=0", "bad value in token 'steps=0'"),
      B(BASE_HEAD BASE_PRESENT " seed=18446744073709551616 steps=1",
        "bad value in token 'seed=18446744073709551616'"),
  };
  size_t i;
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    is_case c;
    char err[512] = "";
    cr_expect_eq(cases_is_parse(bad[i].spec, &c, err, sizeof err), -1, "line %d: accepted %s", bad[i].line, bad[i].spec);
    cr_expect(strstr(err, bad[i].message) != NULL, "line %d: message\n  %s\nwant\n  %s", bad[i].line, err,
              bad[i].message);
  }
}

Test(cases_spec, the_header_examples_parse) {
  static const char *const examples[] = {
      "family=is.valid op=IndexShare dtype=f16 idx=i32 b=2 n=4 nkv=2 sq=1 sc=1 sp=17 h=32 ih=1 k=8 out=3 present=grow "
      "vlen=none bias=2x1x1x18 scale=none seed=7 steps=4",
      "family=is.capfront op=IndexShare dtype=bf16 idx=i64 b=3 n=2 nkv=none sq=2 sc=2 sp=12 h=16 ih=2 k=6 out=3 "
      "present=cap vlen=0,5,12 bias=3x1x2x12 scale=0x1p-2 gaps=2 tail=nan inner=posinf seed=99 steps=4",
      "family=is.contract op=IndexShare dtype=f32 idx=i64 b=1 n=2 nkv=none sq=1 sc=1 sp=0 h=8 ih=1 k=4 out=1 "
      "present=grow vlen=none bias=none scale=none contract=dtype:key:f16 seed=3 steps=1",
  };
  size_t i;
  for (i = 0; i < 3; i++) {
    char out[IS_CASE_SPEC_MAX];
    is_case c = parse_or_die(examples[i]);
    cr_assert_eq(cases_is_format(&c, out, sizeof out), 0);
    cr_expect_str_eq(out, examples[i]);
  }
}

/* -------------------------------------------------------- materialize */

Test(cases_materialize, deterministic_and_steps_differ) {
  spec_set s = generated_suite();
  int i;
  for (i = 0; i < s.n; i += 7) {
    is_case c = parse_or_die(s.v[i]);
    step_tensors a, b;
    uint64_t h0;
    materialize_or_die(&c, 0, &a, s.v[i]);
    materialize_or_die(&c, 0, &b, s.v[i]);
    h0 = step_digest(&a);
    cr_assert_eq(h0, step_digest(&b), "two materializations differ: %s", s.v[i]);
    cases_is_release(b.in, b.out);
    if (c.steps > 1) {
      materialize_or_die(&c, 1, &b, s.v[i]);
      cr_assert_neq(h0, step_digest(&b), "steps 0 and 1 are identical: %s", s.v[i]);
      cr_assert(tensor_numel(&a.in[IS_IN_QUERY]) == 0 ||
                    memcmp(a.in[IS_IN_QUERY].data, b.in[IS_IN_QUERY].data, tensor_bytes(&a.in[IS_IN_QUERY])),
                "the query does not change with the step: %s", s.v[i]);
      cases_is_release(b.in, b.out);
    }
    cases_is_release(a.in, a.out);
  }
  spec_set_free(&s);
}

Test(cases_materialize, pinned_digest) {
  /* Freezes the tensors of one case of each kind of fill: a change here
  ** means existing ids now name different data. */
  static const struct {
    const char *spec;
    uint64_t digest;
  } pins[] = {
      {"family=is.capfront op=IndexShare dtype=bf16 idx=i64 b=3 n=2 nkv=none sq=2 sc=2 sp=12 h=16 ih=2 k=6 out=3 "
       "present=cap vlen=0,5,12 bias=3x1x2x12 scale=0x1p-2 gaps=2 tail=nan inner=posinf seed=99 steps=4",
       0x45af13b22c524831ull},
      {"family=is.numeric op=IndexShare dtype=f16 idx=i32 b=2 n=4 nkv=2 sq=2 sc=2 sp=5 h=8 ih=4 k=5 out=1 "
       "present=grow vlen=none bias=4x2x7 scale=none num=mixed num_in=qkv num_rate=500 seed=5 steps=2",
       0x67bbb17e080f49f9ull},
      {"family=is.masked op=IndexShare dtype=f32 idx=i32 b=2 n=4 nkv=2 sq=2 sc=1 sp=13 h=8 ih=1 k=5 out=3 "
       "present=cap vlen=8,8 bias=1x4x2x13 scale=none masked=3 seed=33 steps=2",
       0x151418847a40c838ull},
      {"family=is.indexviol op=IndexShare dtype=f16 idx=i64 b=2 n=2 nkv=2 sq=1 sc=1 sp=27 h=8 ih=2 k=6 out=3 "
       "present=grow vlen=none bias=1 scale=none viol=out_of_range:1,1,0,3 seed=2999384741 steps=4",
       0x5ca3e4a094551d7full},
  };
  size_t i;
  for (i = 0; i < sizeof pins / sizeof pins[0]; i++) {
    is_case c = parse_or_die(pins[i].spec);
    step_tensors t;
    uint64_t h;
    materialize_or_die(&c, 1, &t, pins[i].spec);
    h = step_digest(&t);
    cr_expect_eq(h, pins[i].digest, "digest %#llx for %s", (unsigned long long)h, pins[i].spec);
    cases_is_release(t.in, t.out);
  }
}

Test(cases_materialize, refuses_over_budget) {
  const char *big = "family=is.valid op=IndexShare dtype=f32 idx=i64 b=64 n=64 nkv=none sq=64 sc=4096 sp=0 h=128 ih=1 "
                    "k=4 out=1 present=grow vlen=none bias=none scale=none seed=1 steps=1";
  is_case c = parse_or_die(big);
  tensor in[IS_CASE_MAX_INPUTS], out[IS_OUTPUT_COUNT];
  index_share_attrs a;
  int n_in, n_out;
  char err[512];
  cr_assert_eq(cases_is_materialize(&c, 0, in, &n_in, out, &n_out, &a, err, sizeof err), -1);
  cr_expect(!strncmp(err, "case needs ", 11) && strstr(err, " bytes, over the budget of 268435456"), "%s", err);
  cases_is_release(in, out);
  c = parse_or_die(BASE_HEAD BASE_PRESENT BASE_TAIL);
  c.budget_bytes = 100;
  cr_assert_eq(cases_is_materialize(&c, 0, in, &n_in, out, &n_out, &a, err, sizeof err), -1);
  cr_expect(strstr(err, "over the budget of 100") != NULL, "%s", err);
  c.budget_bytes = 0;
  cr_assert_eq(cases_is_materialize(&c, 2, in, &n_in, out, &n_out, &a, err, sizeof err), -1);
  cr_expect(strstr(err, "step 2 is outside the case's steps=2") != NULL, "%s", err);
}

/* ---------------------------------------------- families vs the oracle */

/* What the oracle must say about step `step` of c: checked here, per family. */
static void check_against_oracle(const char *spec, const is_case *c, int step, unsigned *contract_codes) {
  step_tensors t;
  index_share_dims d;
  op_error e;
  long long bound[IS_CASE_MAX_BATCH], valid[IS_CASE_MAX_BATCH], wp[IS_CASE_MAX_BATCH];
  char what[400];
  int rc, b;
  materialize_or_die(c, step, &t, spec);
  rc = index_share_validate(&t.attrs, t.in_p, t.n_in, t.out_p, t.n_out, &d, &e);
  op_error_describe(&e, what, sizeof what);
  if (c->family == IS_FAMILY_CONTRACT || (c->family == IS_FAMILY_BIAS && !bias_broadcastable(c))) {
    cr_assert_eq(rc, -1, "step %d: the contract passed: %s", step, spec);
    cr_assert_eq(e.cls, OP_ERR_CONTRACT, "step %d: %s: %s", step, what, spec);
    if (c->family == IS_FAMILY_BIAS) cr_assert_eq(e.rule, IS_CONTRACT_BIAS_BROADCAST, "%s: %s", what, spec);
    *contract_codes |= 1u << e.rule;
    cases_is_release(t.in, t.out);
    return;
  }
  cr_assert_eq(rc, 0, "step %d: contract rejected (%s): %s", step, e.message, spec);
  cr_assert_eq(d.capacity_mode, c->capacity, "%s", spec);
  cases_is_bounds(c, bound);
  if (d.capacity_mode) {
    index_share_capacity_frontier(&d, &t.in[IS_IN_BIAS], valid, wp);
    for (b = 0; b < c->batch; b++)
      cr_assert_eq(valid[b], c->valid_len[b], "step %d batch %d: frontier %lld, intended %lld: %s", step, b, valid[b],
                   c->valid_len[b], spec);
  }
  rc = index_share_validate_indices(&d, &t.in[IS_IN_INDICES], bound, &e);
  op_error_describe(&e, what, sizeof what);
  if (c->family == IS_FAMILY_INDEXVIOL) {
    cr_assert(rc == -1 && e.cls == OP_ERR_INDEX && e.rule == c->viol_rule && e.batch == c->viol_b &&
                  e.head == c->viol_h && e.query == c->viol_q && e.column == c->viol_column,
              "step %d: got %s: %s", step, what, spec);
  } else if (!all_valid_lengths_positive(c)) {
    for (b = 0; c->valid_len[b]; b++) continue;
    cr_assert(rc == -1 && e.rule == INDEX_RULE_OUT_OF_RANGE && e.batch == b && e.head == 0 && e.query == 0 &&
                  e.column == 0,
              "step %d: valid length 0 in batch %d, got %s: %s", step, b, what, spec);
  } else {
    cr_assert_eq(rc, 0, "step %d: %s: %s", step, what, spec);
  }
  if (c->family == IS_FAMILY_MASKED)
    cr_assert(fully_masked_rows(&d, &t.in[IS_IN_BIAS], &t.in[IS_IN_INDICES]) > 0, "step %d: no fully masked row: %s",
              step, spec);
  cases_is_release(t.in, t.out);
}

Test(cases_families, gate_suite_meets_the_oracle) {
  spec_set s = generated_suite();
  unsigned codes = 0, want = 0;
  int i, step, code;
  for (i = 0; i < s.n; i++) {
    is_case c = parse_or_die(s.v[i]);
    for (step = 0; step < c.steps; step++) check_against_oracle(s.v[i], &c, step, &codes);
  }
  /* is.contract reaches every contract code a tensor can carry; negative
  ** dims, a past + current overflow and a rank-5 bias cannot be allocated. */
  for (code = 1; code < IS_CONTRACT_COUNT; code++)
    if (code != IS_CONTRACT_NEGATIVE_DIM && code != IS_CONTRACT_SEQ_OVERFLOW && code != IS_CONTRACT_BIAS_RANK)
      want |= 1u << code;
  for (code = 1; code < IS_CONTRACT_COUNT; code++)
    cr_expect(!(want >> code & 1u) || (codes >> code & 1u), "no case reaches contract code %s",
              index_share_contract_name(code));
  spec_set_free(&s);
}

Test(cases_families, gate_suite_runs_through_the_oracle) {
  /* The whole oracle, every step: valid cases must compute, and it must be quick. */
  spec_set s = generated_suite();
  int i, step, ran = 0;
  for (i = 0; i < s.n; i++) {
    is_case c = parse_or_die(s.v[i]);
    for (step = 0; step < c.steps; step++) {
      step_tensors t;
      op_error e;
      tensor *out_p[IS_OUTPUT_COUNT] = {&t.out[0], &t.out[1], &t.out[2]};
      int rc;
      materialize_or_die(&c, step, &t, s.v[i]);
      rc = oracle_index_share_run(&t.attrs, t.in_p, t.n_in, out_p, t.n_out, NULL, &e);
      if (c.family == IS_FAMILY_VALID || c.family == IS_FAMILY_MASKED || c.family == IS_FAMILY_NUMERIC)
        cr_assert_eq(rc, 0, "step %d: %s: %s", step, e.message, s.v[i]);
      ran += rc == 0;
      cases_is_release(t.in, t.out);
    }
  }
  cr_expect(ran > 2000, "only %d steps computed", ran);
  spec_set_free(&s);
}

/* ----------------------------------------------------------- planting */

Test(cases_plant, every_rule_at_every_place) {
  static const char *const bases[] = {
      "family=is.valid op=IndexShare dtype=f32 idx=i32 b=2 n=2 nkv=none sq=3 sc=2 sp=9 h=4 ih=2 k=6 out=1 present=grow "
      "vlen=none bias=none scale=none seed=11 steps=1",
      "family=is.valid op=IndexShare dtype=f16 idx=i64 b=3 n=4 nkv=2 sq=2 sc=1 sp=12 h=4 ih=1 k=7 out=3 present=cap "
      "vlen=7,12,9 bias=3x1x2x12 scale=none seed=12 steps=1",
  };
  size_t i;
  for (i = 0; i < 2; i++) {
    is_case c = parse_or_die(bases[i]);
    step_tensors t;
    index_share_dims d;
    op_error e;
    long long bound[IS_CASE_MAX_BATCH], b, h, q, col;
    int rule, planted = 0;
    size_t bytes;
    void *pristine;
    materialize_or_die(&c, 0, &t, bases[i]);
    cr_assert_eq(index_share_validate(&t.attrs, t.in_p, t.n_in, t.out_p, t.n_out, &d, &e), 0, "%s", e.message);
    cases_is_bounds(&c, bound);
    bytes = tensor_bytes(&t.in[IS_IN_INDICES]);
    pristine = malloc(bytes);
    memcpy(pristine, t.in[IS_IN_INDICES].data, bytes);
    for (rule = INDEX_RULE_SENTINEL; rule <= INDEX_RULE_ALL_PADDING; rule++)
      for (b = 0; b < d.batch; b++)
        for (h = 0; h < d.index_heads; h++)
          for (q = 0; q < d.q_seq; q++)
            for (col = -1; col < d.selected_width; col++) {
              long long row = ((b * d.index_heads + h) * d.q_seq + q) * d.selected_width;
              size_t esz = dtype_size(t.in[IS_IN_INDICES].dt);
              char what[400];
              int rc;
              memcpy(t.in[IS_IN_INDICES].data, pristine, bytes);
              rc = cases_is_plant(&c, &t.in[IS_IN_INDICES], rule, b, h, q, col, bound);
              if (rc) { /* only where the rule cannot go */
                cr_assert(col == -1 ? rule != INDEX_RULE_ALL_PADDING
                                    : rule == INDEX_RULE_ALL_PADDING || col == 0,
                          "%s refused at (%lld,%lld,%lld,%lld)", index_rule_name(rule), b, h, q, col);
                continue;
              }
              planted++;
              cr_assert_eq(memcmp(t.in[IS_IN_INDICES].data, pristine, (size_t)row * esz), 0, "rows before changed");
              cr_assert_eq(memcmp((char *)t.in[IS_IN_INDICES].data + (size_t)(row + d.selected_width) * esz,
                                  (char *)pristine + (size_t)(row + d.selected_width) * esz,
                                  bytes - (size_t)(row + d.selected_width) * esz),
                           0, "rows after changed");
              index_share_validate_indices(&d, &t.in[IS_IN_INDICES], bound, &e);
              op_error_describe(&e, what, sizeof what);
              cr_assert(e.cls == OP_ERR_INDEX && e.rule == rule && e.batch == b && e.head == h && e.query == q &&
                            e.column == col,
                        "planted %s at (%lld,%lld,%lld,%lld), got %s: %s", index_rule_name(rule), b, h, q, col, what,
                        bases[i]);
            }
    cr_expect(planted > 150, "only %d plantings", planted);
    free(pristine);
    cases_is_release(t.in, t.out);
  }
}

Test(cases_plant, refuses_what_cannot_be) {
  const char *spec = "family=is.valid op=IndexShare dtype=f32 idx=i32 b=1 n=1 nkv=none sq=1 sc=2 sp=0 h=4 ih=1 k=4 "
                     "out=1 present=grow vlen=none bias=none scale=none seed=3 steps=1";
  is_case c = parse_or_die(spec);
  step_tensors t;
  long long bound[1] = {2};
  materialize_or_die(&c, 0, &t, spec);
  cr_expect_eq(cases_is_plant(&c, &t.in[IS_IN_INDICES], INDEX_RULE_DUPLICATE, 0, 0, 0, 0, bound), -1);
  cr_expect_eq(cases_is_plant(&c, &t.in[IS_IN_INDICES], INDEX_RULE_NOT_INCREASING, 0, 0, 0, 2, bound), -1,
               "needs 2 keys in [1, 2)");
  cr_expect_eq(cases_is_plant(&c, &t.in[IS_IN_INDICES], INDEX_RULE_DUPLICATE, 0, 0, 0, 2, bound), 0);
  cr_expect_eq(cases_is_plant(&c, &t.in[IS_IN_INDICES], INDEX_RULE_SENTINEL, 0, 0, 0, 4, bound), -1, "column >= K");
  cr_expect_eq(cases_is_plant(&c, &t.in[IS_IN_INDICES], INDEX_RULE_ALL_PADDING, 0, 0, 0, 0, bound), -1,
               "all_padding is reported at column -1");
  cr_expect_eq(cases_is_plant(&c, &t.in[IS_IN_INDICES], INDEX_RULE_SENTINEL, 1, 0, 0, 0, bound), -1, "no batch 1");
  cases_is_release(t.in, t.out);
}

/* --------------------------------------------------------------- suite */

static void expect_unique_ids(const spec_set *s, const char *what) {
  char (*ids)[CASE_ID_MAX] = calloc((size_t)s->n + 1, sizeof *ids);
  int i, j;
  for (i = 0; i < s->n; i++) cr_assert_eq(case_id_from_spec(s->v[i], ids[i], CASE_ID_MAX), 0, "%s", s->v[i]);
  qsort(ids, (size_t)s->n, sizeof *ids, (int (*)(const void *, const void *))strcmp);
  for (i = 1; i < s->n; i++) cr_expect_str_neq(ids[i - 1], ids[i], "%s: id %s twice", what, ids[i]);
  for (i = 0, j = 0; i < s->n; i++) j += strchr(ids[i], '.') != NULL;
  cr_expect_eq(j, s->n);
  free(ids);
}

Test(cases_suite, ids_unique_and_every_family_present) {
  static const char *const families[] = {"is.valid",  "is.indexviol", "is.bias",    "is.capfront",
                                         "is.masked", "is.contract",  "is.numeric", "is.tiles"};
  spec_set s = generated_suite();
  int f, i;
  expect_unique_ids(&s, "generated gate suite");
  for (f = 0; f < 8; f++) {
    char prefix[64];
    int n = 0;
    snprintf(prefix, sizeof prefix, "family=%s ", families[f]);
    for (i = 0; i < s.n; i++) n += !strncmp(s.v[i], prefix, strlen(prefix));
    cr_expect(n >= cases_is_family_combos(families[f]), "%s: %d specs, fewer than its %d combinations", families[f],
              n, cases_is_family_combos(families[f]));
  }
  spec_set_free(&s);
}

/*
** corpus/SUITE.suite's IndexShare lines are gen's (gen_suite's output, freed
** here), and every id in the file (other operators' too) is unique.
*/
static void expect_committed_suite(const char *suite, spec_set gen) {
  const char *dir = getenv("BITGATE_SOURCE_DIR");
  spec_set committed = {0}, mine = {0};
  char path[4096], *text;
  long size;
  FILE *f;
  int i;
  if (!dir) cr_skip_test("BITGATE_SOURCE_DIR is not set");
  snprintf(path, sizeof path, "%s/corpus/%s.suite", dir, suite);
  cr_assert((f = fopen(path, "r")) != NULL, "cannot read %s", path);
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  rewind(f);
  text = calloc((size_t)size + 1, 1);
  cr_assert_eq(fread(text, 1, (size_t)size, f), (size_t)size);
  fclose(f);
  spec_set_from_text(&committed, text);
  free(text);
  expect_unique_ids(&committed, path);
  for (i = 0; i < committed.n; i++)
    if (!strncmp(committed.v[i], "family=is.", 10)) spec_set_push(committed.v[i], &mine);
  cr_assert_eq(mine.n, gen.n, "%s has %d IndexShare specs, gen_suite makes %d: rerun gen_suite", path, mine.n, gen.n);
  for (i = 0; i < gen.n; i++)
    cr_assert_str_eq(mine.v[i], gen.v[i], "line %d differs from gen_suite's: rerun gen_suite %s", i, path);
  spec_set_free(&gen);
  spec_set_free(&committed);
  spec_set_free(&mine);
}

Test(cases_suite, committed_gate_suite_is_current) { expect_committed_suite("gate", generated_suite()); }

Test(cases_suite, committed_nightly_suite_is_current) { expect_committed_suite("nightly", generated_nightly()); }
