/*
** report_escape.c: one UTF-8 walker, four escapers (report_escape.h).
*/
#include "reports/report_escape.h"

#include <string.h>

/*
** Length of the well-formed UTF-8 sequence at s (1..4), or 0 when the byte
** there does not start one.  Overlong forms, surrogates and code points past
** U+10FFFF are rejected, as the Unicode standard requires.
*/
static int utf8_len(const unsigned char *s) {
  unsigned c = s[0], cp;
  int n, i;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) n = 2, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, cp = c & 0x07;
  else return 0;
  for (i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0; /* also stops at the terminating NUL */
    cp = cp << 6 | (s[i] & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

/*
** Writes s with `one` deciding each ASCII byte; well-formed multibyte
** sequences pass through; a bad byte is written with `bad` (a format taking
** the byte), the language's spelling of the text \xNN.
*/
static void put_walk(FILE *out, const char *s, void (*one)(FILE *, unsigned char), const char *bad) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    int n = utf8_len(p);
    if (n == 0) fprintf(out, bad, (unsigned)*p++);
    else if (n == 1) one(out, *p++);
    else fwrite(p, 1, (size_t)n, out), p += n;
  }
}

static void one_xml(FILE *out, unsigned char c) {
  switch (c) {
  case '&': fputs("&amp;", out); break;
  case '<': fputs("&lt;", out); break;
  case '>': fputs("&gt;", out); break;
  case '"': fputs("&quot;", out); break;
  case '\'': fputs("&#39;", out); break;
  default:
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) fprintf(out, "\\x%02X", c); /* not XML 1.0 */
    else fputc(c, out);
  }
}

static void one_json(FILE *out, unsigned char c) {
  if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
  else if (c == '\n') fputs("\\n", out);
  else if (c == '\t') fputs("\\t", out);
  else if (c < 0x20 || c == 0x7F) fprintf(out, "\\u%04x", (unsigned)c);
  else fputc(c, out);
}

static void one_md(FILE *out, unsigned char c) {
  if (c == '\n' || c == '\r' || c == '\t') fputc(' ', out); /* a newline would end the table row */
  else if (c < 0x20 || c == 0x7F) fprintf(out, "\\x%02X", c);
  else if (c == '&') fputs("&amp;", out); /* no entity or HTML may sneak into a PR comment */
  else if (c == '<') fputs("&lt;", out);
  else if (c == '>') fputs("&gt;", out);
  else if (strchr("\\`*_[]()#|!~{}", c)) fprintf(out, "\\%c", c);
  else fputc(c, out);
}

/* In a code span only the pipe is special (GFM tables split on it even there). */
static void one_md_code(FILE *out, unsigned char c) {
  if (c == '\n' || c == '\r' || c == '\t') fputc(' ', out);
  else if (c < 0x20 || c == 0x7F) fprintf(out, "\\x%02X", c);
  else if (c == '|') fputs("\\|", out);
  else fputc(c, out);
}

void report_put_xml(FILE *out, const char *s) { put_walk(out, s ? s : "", one_xml, "\\x%02X"); }

void report_put_json(FILE *out, const char *s) {
  if (!s) {
    fputs("null", out);
    return;
  }
  fputc('"', out);
  put_walk(out, s, one_json, "\\\\x%02X"); /* JSON has no \\x escape: a literal backslash */
  fputc('"', out);
}

void report_put_md(FILE *out, const char *s) { put_walk(out, s ? s : "", one_md, "\\\\x%02X"); }

void report_put_md_code(FILE *out, const char *s) {
  size_t run = 0, longest = 0, n;
  const char *p;
  s = s ? s : "";
  for (p = s; *p; p++) {
    run = *p == '`' ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  for (n = 0; n <= longest; n++) fputc('`', out);
  if (longest) fputc(' ', out); /* a span may then start or end with a backtick */
  put_walk(out, s, one_md_code, "\\x%02X");
  if (longest) fputc(' ', out);
  for (n = 0; n <= longest; n++) fputc('`', out);
}
