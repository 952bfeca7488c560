/*
** shrink_signature.c: see shrink_signature.h.
**
** A row keeps only the hex of its first mismatching element, not its dtype,
** so NaN and infinity are read from the decimal text the diff wrote into the
** message ("expected 0x7fc00000 (nan), got ..."), which is where every lane
** puts tensor_diff_describe's words.
*/
#include "harness/shrink_signature.h"

#include <stdio.h>
#include <string.h>

static int row_failed(const result_row *row) { return strcmp(row->status, "pass") && strcmp(row->status, "skipped"); }

/* Is hex ("0xa5a5a5a5") the junk fill byte repeated? */
static int hex_is_junk(const char *hex) {
  const char *p = hex + 2;
  if (strncmp(hex, "0x", 2) || !*p) return 0;
  for (; p[0] && p[1]; p += 2)
    if (p[0] != 'a' || p[1] != '5') return 0;
  return !*p;
}

/*
** The decimal text of the side that follows `label` ("expected ", "got ") in
** the diff's "LABEL 0x.. (TEXT)" wording; "" when the message has none.
*/
static void side_text(const char *message, const char *label, char *out, size_t len) {
  const char *at = strstr(message, label), *open, *close;
  out[0] = '\0';
  if (!at || !(open = strstr(at, " (")) || !(close = strchr(open, ')'))) return;
  snprintf(out, len, "%.*s", (int)(close - open - 2), open + 2);
}

static int text_is(const char *text, const char *what) {
  return !strcmp(text, what) || (text[0] == '-' && !strcmp(text + 1, what));
}

const char *shrink_sig_kind(const result_row *row) {
  char expected[64], actual[64];
  if (strcmp(row->status, "mismatch")) return row->status; /* error_parity, fail, frozen_changed, ... */
  if (!strcmp(row->coords, "shape")) return "shape";
  if (hex_is_junk(row->actual_hex) && !hex_is_junk(row->expected_hex)) return "junk";
  side_text(row->message, "expected 0x", expected, sizeof expected);
  side_text(row->message, "got 0x", actual, sizeof actual);
  if (text_is(expected, "nan") || text_is(actual, "nan")) return "nan";
  if (text_is(expected, "inf") || text_is(actual, "inf")) return "inf";
  return row->ulp_distance >= 0 ? "value" : "index";
}

void shrink_sig_of_report(const case_report *r, shrink_sig *out) {
  const result_row *first = NULL;
  int l, i;
  memset(out, 0, sizeof *out);
  for (l = 0; l < LANE_COUNT && !first; l++)
    for (i = 0; i < r->n && !first; i++)
      if (row_failed(&r->rows[i]) && !strcmp(r->rows[i].lane, lane_name((lane)l))) first = &r->rows[i];
  if (!first) return;
  out->failed = 1;
  snprintf(out->lane, sizeof out->lane, "%s", first->lane);
  snprintf(out->stage, sizeof out->stage, "%s", first->stage[0] ? first->stage : first->tensor);
  snprintf(out->tensor, sizeof out->tensor, "%s", first->tensor);
  snprintf(out->kind, sizeof out->kind, "%s", shrink_sig_kind(first));
}

int shrink_sig_equal(const shrink_sig *a, const shrink_sig *b) {
  if (!a->failed || !b->failed) return a->failed == b->failed;
  return !strcmp(a->lane, b->lane) && !strcmp(a->stage, b->stage) && !strcmp(a->tensor, b->tensor) &&
         !strcmp(a->kind, b->kind);
}

void shrink_sig_text(const shrink_sig *s, char *out, size_t len) {
  if (!s->failed) snprintf(out, len, "pass");
  else snprintf(out, len, "%s/%s/%s/%s", s->lane, s->stage[0] ? s->stage : "-", s->tensor[0] ? s->tensor : "-", s->kind);
}

lane_mask shrink_sig_lanes(const shrink_sig *s) {
  lane_mask m = 0;
  char err[128];
  if (!s->failed || lane_mask_parse(s->lane, &m, err, sizeof err) != 0) return LANE_ALL;
  return m;
}
