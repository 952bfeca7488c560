/*
** op_error.h: the structured error both sides of every comparison report
** (DESIGN.md "Error parity").  Oracle and device must agree on the class, the
** rule and the location; the message is for people and is not compared.
*/
#ifndef ORACLE_OP_ERROR_H
#define ORACLE_OP_ERROR_H

typedef enum op_error_class {
  OP_OK = 0,
  OP_ERR_CONTRACT, /* claim-time contract: arity, dtype, rank, shape, attribute */
  OP_ERR_INDEX     /* a selected_indices row breaks a rule (IndexShare) */
} op_error_class;

/* The six index-row rules, in the order the validation tests them. */
typedef enum index_rule {
  INDEX_RULE_NONE = 0,
  INDEX_RULE_SENTINEL,      /* a value below -1 */
  INDEX_RULE_AFTER_PADDING, /* a value after trailing -1 padding */
  INDEX_RULE_OUT_OF_RANGE,  /* >= the batch's bound */
  INDEX_RULE_DUPLICATE,     /* equal to the previous value */
  INDEX_RULE_NOT_INCREASING,/* below the previous value */
  INDEX_RULE_ALL_PADDING    /* the whole row is -1 (column is -1) */
} index_rule;

typedef struct op_error {
  op_error_class cls;
  int rule;      /* index_rule for OP_ERR_INDEX; the contract's code for OP_ERR_CONTRACT */
  int input;     /* input (or, for outputs, 100 + output) the contract names; -1 if none */
  int axis;      /* axis the contract names; -1 if none */
  long long batch, head, query, column; /* index errors; -1 where not applicable */
  char message[320];
} op_error;

/* Sets e to a contract error (code, input, axis, message) and returns -1. */
int op_error_contract(op_error *e, int code, int input, int axis, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Resets e to OP_OK with every location -1. */
void op_error_clear(op_error *e);
/* 1 when class, rule and location agree (messages may differ). */
int op_error_same(const op_error *a, const op_error *b);
/* "index: out_of_range at [batch=0, head=1, query=2, column=3]" and similar. */
void op_error_describe(const op_error *e, char *out, unsigned long out_len);
const char *index_rule_name(int rule);

#endif
