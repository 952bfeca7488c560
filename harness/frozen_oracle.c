/*
** frozen_oracle.c: digests of the oracle's outcomes, checked against the
** committed ones (see frozen_oracle.h).
**
** The digest is libxxhash's XXH3-128 of the tensor's bytes, written in its
** canonical big-endian form so the file reads the same on every host.  The
** dtype and shape are kept beside it in plain text: a shape change then
** shows as such in the message instead of as two unrelated hashes.
**
** NaNs: DESIGN.md "Comparison" makes two NaNs of one dtype equal, and the
** oracle only promises that much: which NaN payload survives an operation
** depends on operand order, which the compiler may choose differently per
** build (measured: three is.numeric cases give other NaN bits in the
** sanitizer build than in RelWithDebInfo).  So in f32, f16 and bf16 tensors
** every NaN is hashed as its dtype's canonical quiet NaN.  Packed u8 caches
** are hashed as they are: their codes are compared byte for byte everywhere.
*/
#include "harness/frozen_oracle.h"
#include "oracle/numerics/nx_base.h"
#include "oracle/op_error.h"
#include "oracle/oracle_version.h"
#include "oracle/tensor.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define REPIN_HINT "re-pin with bitgate golden pin"

/*
** A NaN test on every lane of a 64-bit word at once (lanes of 32 bits for
** f32, 16 for f16 and bf16).  With S the lane's sign bit and E its infinity
** (0x7f800000, 0x7c00, 0x7f80), x is a NaN iff (x & ~S) > E, iff
** (x & ~S) + (S - 1 - E) sets bit S; the sum stays below 2S, so no lane
** carries into the next.  Branch-free: the scan costs less than the hash.
*/
typedef struct nan_lanes {
  uint64_t clear_sign, add, sign;
} nan_lanes;

static nan_lanes nan_lanes_of(dtype dt) {
  nan_lanes l;
  if (dt == DTYPE_F32) {
    l.sign = 0x8000000080000000ull;
    l.add = 0x007fffff007fffffull; /* S - 1 - 0x7f800000 */
  } else {
    l.sign = 0x8000800080008000ull;
    l.add = dt == DTYPE_F16 ? 0x03ff03ff03ff03ffull  /* S - 1 - 0x7c00 */
                            : 0x007f007f007f007full; /* S - 1 - 0x7f80 */
  }
  l.clear_sign = ~l.sign;
  return l;
}

/* 1 when any element in the bytes at p is a NaN (a short tail is padded with zeros, not NaNs). */
static int has_nan(const nan_lanes *l, const unsigned char *p, size_t bytes) {
  uint64_t any = 0, w;
  size_t i;
  for (i = 0; i + 8 <= bytes; i += 8) {
    memcpy(&w, p + i, 8);
    any |= ((w & l->clear_sign) + l->add) & l->sign;
  }
  if (i < bytes) {
    w = 0;
    memcpy(&w, p + i, bytes - i);
    any |= ((w & l->clear_sign) + l->add) & l->sign;
  }
  return any != 0;
}

/* Rewrites every NaN in the bytes at p (elements of float dtype dt) as the canonical quiet NaN. */
static void canonicalize_nans(dtype dt, const nan_lanes *l, unsigned char *p, size_t bytes) {
  const uint32_t quiet32 = 0x7fc00000u;
  const uint16_t quiet16 = dt == DTYPE_F16 ? 0x7e00u : 0x7fc0u;
  size_t i, size = dtype_size(dt);
  for (i = 0; i + size <= bytes; i += size) {
    if (!has_nan(l, p + i, size)) continue;
    if (size == 4)
      memcpy(p + i, &quiet32, sizeof quiet32);
    else
      memcpy(p + i, &quiet16, sizeof quiet16);
  }
}

/*
** XXH3-128 of t's bytes, NaNs of float dtypes canonical (see the file
** comment).  Float tensors go in chunks small enough to stay in L1 between
** the NaN scan and the hash; only a chunk holding a NaN is copied.
*/
static XXH128_hash_t tensor_digest(const tensor *t) {
  XXH3_state_t state;
  unsigned char chunk[16384]; /* a multiple of every element size */
  const unsigned char *p = t->data;
  size_t bytes = t->data ? tensor_bytes(t) : 0, done, n;
  nan_lanes lanes;
  if (!dtype_is_float(t->dt)) return XXH3_128bits(p, bytes);
  lanes = nan_lanes_of(t->dt);
  XXH3_128bits_reset(&state);
  for (done = 0; done < bytes; done += n) {
    n = bytes - done < sizeof chunk ? bytes - done : sizeof chunk;
    if (!has_nan(&lanes, p + done, n)) {
      XXH3_128bits_update(&state, p + done, n);
      continue;
    }
    memcpy(chunk, p + done, n);
    canonicalize_nans(t->dt, &lanes, chunk, n);
    XXH3_128bits_update(&state, chunk, n);
  }
  return XXH3_128bits_digest(&state);
}

void frozen_oracle_tensor_value(const tensor *t, char *out, size_t len) {
  XXH128_canonical_t sum;
  size_t used;
  int d, i;
  XXH128_canonicalFromHash(&sum, tensor_digest(t));
  used = (size_t)snprintf(out, len, "%s[", dtype_name(t->dt));
  for (d = 0; d < t->rank && used < len; d++)
    used += (size_t)snprintf(out + used, len - used, d ? ",%lld" : "%lld", t->shape[d]);
  if (used < len) used += (size_t)snprintf(out + used, len - used, "]:");
  for (i = 0; i < (int)sizeof sum.digest && used < len; i++)
    used += (size_t)snprintf(out + used, len - used, "%02x", sum.digest[i]);
}

void frozen_oracle_rejection_value(const op_error *e, char *out, size_t len) {
  char rule[32];
  if (e->cls == OP_ERR_INDEX) snprintf(rule, sizeof rule, "%s", index_rule_name(e->rule));
  else snprintf(rule, sizeof rule, "%d", e->rule);
  snprintf(out, len, "%s:rule=%s:input=%d:axis=%d:at=%lld,%lld,%lld,%lld",
           e->cls == OP_ERR_INDEX ? "index" : "contract", rule, e->input, e->axis, e->batch, e->head, e->query,
           e->column);
}

/* The oracle-outcome sink: one entry per output, or one for the rejection. */
static void record_outcome(void *ctx, const char *case_id, int step, const tensor *outputs, const char *const *names,
                           int n_out, const op_error *rejection) {
  frozen_oracle *f = ctx;
  char value[sizeof f->observed.entries->value];
  int o;
  if (rejection) {
    frozen_oracle_rejection_value(rejection, value, sizeof value);
    f->out_of_memory |= golden_digests_append(&f->observed, case_id, step, GOLDEN_REJECTED, value) != 0;
    return;
  }
  for (o = 0; o < n_out; o++) {
    frozen_oracle_tensor_value(&outputs[o], value, sizeof value);
    f->out_of_memory |= golden_digests_append(&f->observed, case_id, step, names[o], value) != 0;
  }
}

int frozen_oracle_open(frozen_oracle *f, const char *dir, const char *suite, char *err, size_t err_len) {
  int rc;
  memset(f, 0, sizeof *f);
  golden_digests_path(dir, suite, f->path, sizeof f->path);
  rc = golden_digests_read(f->path, 0, suite, &f->pinned, err, err_len);
  f->checking = rc == 0;
  return rc;
}

void frozen_oracle_open_pin(frozen_oracle *f) { memset(f, 0, sizeof *f); }

void frozen_oracle_attach(frozen_oracle *f, runner_env *env) {
  env->oracle_outcome = record_outcome;
  env->oracle_outcome_ctx = f;
}

/*
** Describes the first difference between the case's observed entries (got)
** and its pinned ones (want) as a row; 0 when there is none.
*/
static int compare_entries(const char *id, const golden_entry *got, long long n_got, const golden_entry *want,
                           long long n_want, case_report *r) {
  char head[300], msg[700];
  long long i;
  for (i = 0; i < n_got || i < n_want; i++) {
    const golden_entry *g = i < n_got ? &got[i] : NULL, *w = i < n_want ? &want[i] : NULL, *at = g ? g : w;
    int rejection = !strcmp(at->name, GOLDEN_REJECTED);
    if (g && w && g->step == w->step && !strcmp(g->name, w->name) && !strcmp(g->value, w->value)) continue;
    snprintf(head, sizeof head, "frozen oracle changed: %s step %d %s%s", id, at->step,
             rejection ? "rejection" : "tensor ", rejection ? "" : at->name);
    if (g && w && g->step == w->step && !strcmp(g->name, w->name))
      snprintf(msg, sizeof msg, "%s: %s %s, pinned %s; " REPIN_HINT, head, rejection ? "now" : "digest", g->value,
               w->value);
    else if (g && w)
      snprintf(msg, sizeof msg, "%s: the oracle now gives this where step %d %s was pinned; " REPIN_HINT, head,
               w->step, w->name);
    else
      snprintf(msg, sizeof msg, "%s: %s; " REPIN_HINT, head,
               g ? "the oracle gives it, but it is not pinned" : "pinned, but the oracle no longer gives it");
    case_report_add_failure(r, LANE_ORACLE, at->step, "frozen_changed", at->name, msg);
    return -1;
  }
  return 0;
}

int frozen_oracle_check_case(frozen_oracle *f, const char *case_id, case_report *r) {
  const golden_entry *want;
  char msg[700];
  long long n_want;
  int rc = -1;
  if (!f->checking) return 0;
  f->cases_checked++;
  want = golden_digests_find_case(&f->pinned, case_id, &n_want);
  if (f->out_of_memory) {
    snprintf(msg, sizeof msg, "frozen oracle: %s: out of memory recording its digests", case_id);
    case_report_add_failure(r, LANE_ORACLE, 0, "fail", "", msg);
  } else if (!want) {
    snprintf(msg, sizeof msg, "frozen oracle: %s is not pinned in %.400s; pin it with bitgate golden pin", case_id,
             f->path);
    case_report_add_failure(r, LANE_ORACLE, 0, "unpinned", "", msg);
    f->cases_unpinned++;
  } else if (compare_entries(case_id, f->observed.entries, f->observed.n, want, n_want, r) != 0) {
    f->cases_changed++;
  } else {
    rc = 0;
  }
  f->out_of_memory = 0;
  golden_digests_clear(&f->observed);
  return rc;
}

int frozen_oracle_stale(const frozen_oracle *f, char *why, size_t len) {
  if (!f->checking) return 0;
  if (f->pinned.oracle_version == ORACLE_VERSION && f->pinned.numerics_version == NX_NUMERICS_VERSION) return 0;
  snprintf(why, len, "%s pins oracle %d / numerics %d, this build is oracle %d / numerics %d; " REPIN_HINT, f->path,
           f->pinned.oracle_version, f->pinned.numerics_version, ORACLE_VERSION, NX_NUMERICS_VERSION);
  return 1;
}

void frozen_oracle_close(frozen_oracle *f) {
  golden_digests_free(&f->pinned);
  golden_digests_free(&f->observed);
}
