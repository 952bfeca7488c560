/*
** spec_text.c: see spec_text.h.
*/
#include "cases/spec_text.h"
#include "oracle/numerics/nx_base.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

void spec_set_err(char *err, size_t len, const char *fmt, ...) {
  va_list ap;
  if (!err || !len) return;
  va_start(ap, fmt);
  vsnprintf(err, len, fmt, ap);
  va_end(ap);
}

int spec_name_lookup(const char *const *names, int n, const char *s) {
  int i;
  for (i = 0; i < n; i++)
    if (!strcmp(names[i], s)) return i;
  return -1;
}

int spec_parse_u64(const char *s, unsigned long long *out) {
  unsigned long long v = 0;
  if (!isdigit((unsigned char)*s) || (s[0] == '0' && s[1])) return -1; /* no sign, no leading 0 */
  for (; *s; s++) {
    unsigned d = (unsigned)(*s - '0');
    if (!isdigit((unsigned char)*s) || v > (ULLONG_MAX - d) / 10) return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

int spec_parse_ll(const char *s, long long lo, long long hi, long long *out) {
  unsigned long long v;
  int neg = *s == '-';
  if (spec_parse_u64(s + neg, &v) || v > (unsigned long long)LLONG_MAX || (neg && v == 0)) return -1;
  if ((neg ? -(long long)v : (long long)v) < lo || (neg ? -(long long)v : (long long)v) > hi) return -1;
  *out = neg ? -(long long)v : (long long)v;
  return 0;
}

void spec_format_hex_float(float f, char *out, size_t len) {
  uint32_t u = nx_f32_bits(f), m = u & 0x7fffffu;
  int e = (int)(u >> 23 & 0xffu), digits = 6;
  const char *sign = u >> 31 ? "-" : "";
  if (e == 0xff) {
    snprintf(out, len, "%s", m ? "nan" : u >> 31 ? "-inf" : "inf");
    return;
  }
  if (e == 0 && m == 0) {
    snprintf(out, len, "%s0x0p+0", sign);
    return;
  }
  if (e == 0) /* subnormal: normalise, as the double it widens to is */
    for (e = 1; !(m & 0x800000u); e--) m <<= 1;
  m = (m & 0x7fffffu) << 1; /* 24 bits: six hex digits after the point */
  for (; digits > 0 && !(m & 0xfu); digits--) m >>= 4;
  if (digits) snprintf(out, len, "%s0x1.%0*xp%+d", sign, digits, (unsigned)m, e - 127);
  else snprintf(out, len, "%s0x1p%+d", sign, e - 127);
}

void spec_token_text(const char *p, size_t n, char *out, size_t len) {
  snprintf(out, len, "%.*s%s", (int)(n > 200 ? 200 : n), p, n > 200 ? "..." : "");
}


static int spec_key_index(const spec_grammar *g, const char *name, size_t len) {
  int i;
  for (i = 0; i < g->n_keys; i++)
    if (strlen(g->key_name(i)) == len && !strncmp(g->key_name(i), name, len)) return i;
  return -1;
}

static int spec_parse_token(const spec_grammar *g, const char *p, size_t n, void *c, unsigned char *seen, char *err,
                            size_t len) {
  char tok[256], value[4096];
  const char *eq = memchr(p, '=', n);
  int k;
  spec_token_text(p, n, tok, sizeof tok);
  if (!eq) return spec_set_err(err, len, "malformed token '%s' (expected key=value)", tok), -1;
  if ((k = spec_key_index(g, p, (size_t)(eq - p))) < 0)
    return spec_set_err(err, len, "unknown key in token '%s'", tok), -1;
  if (!g->key_allowed(c, k))
    return spec_set_err(err, len, "key not used by family %s in token '%s'", g->family_name(c), tok), -1;
  if (seen[k]) return spec_set_err(err, len, "repeated key in token '%s'", tok), -1;
  seen[k] = 1;
  if ((size_t)(p + n - eq) > g->spec_max) return spec_set_err(err, len, "bad value in token '%s'", tok), -1;
  memcpy(value, eq + 1, (size_t)(p + n - eq - 1));
  value[p + n - eq - 1] = '\0';
  if (g->parse_key(c, k, value)) return spec_set_err(err, len, "bad value in token '%s'", tok), -1;
  return 0;
}

static int spec_parse_family(const spec_grammar *g, const char *spec, void *c, char *err, size_t len) {
  const char *p = spec;
  while (*p) {
    size_t n;
    while (*p == ' ') p++;
    n = strcspn(p, " ");
    if (n > 7 && !strncmp(p, "family=", 7)) {
      char v[64], tok[256];
      spec_token_text(p, n, tok, sizeof tok);
      if (n - 7 >= sizeof v) return spec_set_err(err, len, "bad value in token '%s'", tok), -1;
      memcpy(v, p + 7, n - 7);
      v[n - 7] = '\0';
      return g->parse_family(c, v) ? (spec_set_err(err, len, "bad value in token '%s'", tok), -1) : 0;
    }
    p += n;
  }
  spec_set_err(err, len, "missing key 'family'");
  return -1;
}

int spec_parse_tokens(const spec_grammar *g, const char *spec, void *c, char *err, size_t len) {
  unsigned char seen[64] = {0};
  const char *p = spec;
  int i;
  if (g->n_keys > 64 || g->spec_max > 4096) return spec_set_err(err, len, "grammar too large"), -1;
  if (strlen(spec) >= g->spec_max) return spec_set_err(err, len, "spec longer than %d characters", (int)g->spec_max - 1), -1;
  if (spec_parse_family(g, spec, c, err, len)) return -1;
  while (*p) {
    size_t n;
    while (*p == ' ') p++;
    if (!*p) break;
    n = strcspn(p, " ");
    if (spec_parse_token(g, p, n, c, seen, err, len)) return -1;
    p += n;
  }
  for (i = 0; i < g->n_keys; i++)
    if (g->key_allowed(c, i) && !seen[i] && !(g->key_default && g->key_default(c, i))) return spec_set_err(err, len, "missing key '%s'", g->key_name(i)), -1;
  return 0;
}

int spec_format_tokens(const spec_grammar *g, const void *c, char *spec, size_t len) {
  size_t used = 0;
  char v[4096];
  int i, w;
  if (!len) return -1;
  spec[0] = '\0';
  for (i = 0; i < g->n_keys; i++) {
    if (!g->key_allowed(c, i) || (g->key_default && g->key_default(c, i))) continue;
    if (g->format_key(c, i, v, sizeof v < g->spec_max ? sizeof v : g->spec_max)) return -1;
    w = snprintf(spec + used, len - used, "%s%s=%s", used ? " " : "", g->key_name(i), v);
    if (w < 0 || (size_t)w >= len - used) return -1;
    used += (size_t)w;
  }
  return 0;
}

int spec_inconsistent(const spec_grammar *g, const void *c, const char *key, char *err, size_t len, const char *fmt,
                      ...) {
  char v[4096] = "", why[256];
  int k = spec_key_index(g, key, strlen(key));
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  if (k >= 0 && g->format_key(c, k, v, sizeof v < g->spec_max ? sizeof v : g->spec_max)) v[0] = '\0';
  spec_set_err(err, len, "inconsistent token '%s=%.200s': %s", key, v, why);
  return -1;
}
