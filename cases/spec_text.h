/*
** spec_text.h: the text helpers every case family's spec grammar shares:
** strict number parsing, name tables, C99 "%a" text of a float written
** without the C library (so ids never depend on it), and error messages that
** quote the offending token.
*/
#ifndef CASES_SPEC_TEXT_H
#define CASES_SPEC_TEXT_H

#include <stddef.h>

/* printf into err (NULL-safe). */
void spec_set_err(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Index of s in names[0..n), or -1. */
int spec_name_lookup(const char *const *names, int n, const char *s);
/* A whole decimal number with no sign; 0 or -1. */
int spec_parse_u64(const char *s, unsigned long long *out);
/* A whole decimal number, optionally negative, within [lo, hi]; 0 or -1. */
int spec_parse_ll(const char *s, long long lo, long long hi, long long *out);
/* "%a" text of f as glibc writes it ("0x1.8p-3", "-0x0p+0", "inf", "nan"). */
void spec_format_hex_float(float f, char *out, size_t len);
/* The token p[0..n) for an error message, cut at 200 characters. */
void spec_token_text(const char *p, size_t n, char *out, size_t len);

/*
** A family's key=value grammar, for spec_parse_tokens.  Keys are numbered
** 0..n_keys-1; callbacks receive the family's case struct as void *.
*/
typedef struct spec_grammar {
  int n_keys;
  size_t spec_max;                              /* longest spec, with its NUL (<= 4096) */
  const char *(*key_name)(int key);
  int (*key_allowed)(const void *c, int key);   /* key belongs to c's family */
  int (*parse_key)(void *c, int key, const char *value); /* 0, or -1 on a bad value */
  int (*parse_family)(void *c, const char *value);       /* sets the family; 0 or -1 */
  const char *(*family_name)(const void *c);
  int (*format_key)(const void *c, int key, char *out, size_t len); /* the key's value text; 0 or -1 */
  /*
  ** Optional keys (NULL: every allowed key is required): 1 when `key` may be
  ** left out and c holds its default.  Parsing then does not require it and
  ** the canonical text leaves it out, so a key added later (e.g. csa4's
  ** mag=) keeps every older spec's bytes and id.  The key's own parser must
  ** refuse the default's text, so each case still has one canonical text.
  */
  int (*key_default)(const void *c, int key);
} spec_grammar;

/*
** Parses spec's tokens into c: the family token first (it decides which keys
** belong), then every token once, then checks that every key of the family
** was given (or is optional and left at its default).  Strict: a malformed, unknown, foreign, repeated or bad token
** fails with a message quoting it, and a missing key with its name.
** 0, or -1 with err set.
*/
int spec_parse_tokens(const spec_grammar *g, const char *spec, void *c, char *err, size_t len);

/*
** The canonical spec of c: "key=value" for every key of c's family, in key
** order, joined by single spaces; an optional key at its default is left out.  The caller checks that c's family is one
** the grammar knows.  0, or -1 when a value or the whole does not fit.
*/
int spec_format_tokens(const spec_grammar *g, const void *c, char *spec, size_t len);

/*
** Sets err to "inconsistent token 'key=value': why" (value as c holds it,
** cut at 200 characters; empty when key is unknown) and returns -1.
*/
int spec_inconsistent(const spec_grammar *g, const void *c, const char *key, char *err, size_t len, const char *fmt,
                      ...) __attribute__((format(printf, 6, 7)));

#endif
