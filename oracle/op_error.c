/*
** op_error.c: see op_error.h.
*/
#include "oracle/op_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void op_error_clear(op_error *e) {
  memset(e, 0, sizeof *e);
  e->input = e->axis = -1;
  e->batch = e->head = e->query = e->column = -1;
}

int op_error_same(const op_error *a, const op_error *b) {
  return a->cls == b->cls && a->rule == b->rule && a->input == b->input && a->axis == b->axis &&
         a->batch == b->batch && a->head == b->head && a->query == b->query && a->column == b->column;
}

const char *index_rule_name(int rule) {
  static const char *const names[] = {"none", "sentinel", "after_padding", "out_of_range",
                                      "duplicate", "not_increasing", "all_padding"};
  return rule >= 0 && rule <= INDEX_RULE_ALL_PADDING ? names[rule] : "?";
}

void op_error_describe(const op_error *e, char *out, unsigned long out_len) {
  switch (e->cls) {
  case OP_OK: snprintf(out, out_len, "ok"); break;
  case OP_ERR_INDEX:
    snprintf(out, out_len, "index: %s at [batch=%lld, head=%lld, query=%lld, column=%lld]",
             index_rule_name(e->rule), e->batch, e->head, e->query, e->column);
    break;
  default:
    snprintf(out, out_len, "contract %d at input %d axis %d", e->rule, e->input, e->axis);
    break;
  }
}

int op_error_contract(op_error *e, int code, int input, int axis, const char *fmt, ...) {
  va_list ap;
  op_error_clear(e);
  e->cls = OP_ERR_CONTRACT;
  e->rule = code;
  e->input = input;
  e->axis = axis;
  va_start(ap, fmt);
  vsnprintf(e->message, sizeof e->message, fmt, ap);
  va_end(ap);
  return -1;
}
