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

#endif
