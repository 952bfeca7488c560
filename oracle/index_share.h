/*
** index_share.h: the IndexShare operator's frozen CPU oracle (seed
** 000_7dfea7c512118af3.txt, DESIGN.md).  Plain C whose every sum is serial
** (independent output rows may run on several threads, oracle_threads.h);
** oracle/SPEC.md gives every formula in the order it is computed.
**
** Inputs (index: name): 0 query [B, N, Sq, H]; 1 key, 2 value [B, Nkv, Sc, H];
** 3 past_key, 4 past_value [B, Nkv, Sp, H] (optional, in pairs);
** 5 selected_indices [B, 1|N, Sq, K] (i32 or i64); 6 attention_bias (optional,
** rank <= 4, broadcastable to [B, N, Sq, cache_seq]).
** Outputs: 0 Y [B, N, Sq, H]; optionally 1 present_key, 2 present_value, either
** growing [B, Nkv, Sp + Sc, H] or fixed capacity [B, Nkv, Sp, H] (capacity
** mode, which needs a bias: its finite frontier carries the valid length).
** An absent input is NULL or has dt == DTYPE_NONE.
*/
#ifndef ORACLE_INDEX_SHARE_H
#define ORACLE_INDEX_SHARE_H

#include "oracle/op_error.h"
#include "oracle/tensor.h"

enum index_share_input {
  IS_IN_QUERY = 0,
  IS_IN_KEY,
  IS_IN_VALUE,
  IS_IN_PAST_KEY,
  IS_IN_PAST_VALUE,
  IS_IN_INDICES,
  IS_IN_BIAS,
  IS_INPUT_COUNT
};
enum index_share_output { IS_OUT_Y = 0, IS_OUT_PRESENT_KEY, IS_OUT_PRESENT_VALUE, IS_OUTPUT_COUNT };

/*
** Contract codes (op_error.rule when cls == OP_ERR_CONTRACT), numbered in the
** order index_share_validate tests them; the first failing check is reported.
** Each comment says what op_error.input / .axis name (in = input index,
** 100 + o = output o, -1 = nothing).  oracle/SPEC.md section 1 is the source.
*/
enum index_share_contract {
  IS_CONTRACT_NONE = 0,
  IS_CONTRACT_NUM_HEADS,        /* num_heads <= 0; in -1, axis -1 */
  IS_CONTRACT_KV_NUM_HEADS,     /* kv_num_heads < 0 (0 means absent); -1, -1 */
  IS_CONTRACT_HEAD_GROUP,       /* num_heads % kv_num_heads != 0; -1, -1 */
  IS_CONTRACT_SCALE,            /* scale given but not finite or <= 0; -1, -1 */
  IS_CONTRACT_ARITY_INPUTS,     /* n_inputs not 6 or 7; -1, -1 */
  IS_CONTRACT_ARITY_OUTPUTS,    /* n_outputs not 1 or 3; -1, -1 */
  IS_CONTRACT_REQUIRED_INPUT,   /* input 0, 1, 2 or 5 absent; in, -1 */
  IS_CONTRACT_PAST_PAIR,        /* one of past_key/past_value absent; the absent one, -1 */
  IS_CONTRACT_QUERY_DTYPE,      /* query not f32/f16/bf16; 0, -1 */
  IS_CONTRACT_DTYPE_MISMATCH,   /* key/value/past/bias dtype != query's; in, -1 */
  IS_CONTRACT_INDEX_DTYPE,      /* selected_indices not i32/i64; 5, -1 */
  IS_CONTRACT_OUTPUT_DTYPE,     /* an output's dtype != query's; 100 + o, -1 */
  IS_CONTRACT_RANK,             /* input 0/1/2/5/3/4 rank != 4; in, -1 */
  IS_CONTRACT_NEGATIVE_DIM,     /* a dimension of those inputs < 0; in, axis */
  IS_CONTRACT_QUERY_HEADS,      /* query.shape[1] != num_heads; 0, 1 */
  IS_CONTRACT_KV_BATCH,         /* key/value shape[0] != B; 1 or 2, 0 */
  IS_CONTRACT_KV_HEADS,         /* key/value shape[1] != kv_num_heads; 1 or 2, 1 */
  IS_CONTRACT_KV_SEQ,           /* value.shape[2] != key.shape[2]; 2, 2 */
  IS_CONTRACT_KV_HEAD_SIZE,     /* key/value shape[3] != H; 1 or 2, 3 */
  IS_CONTRACT_PAST_MISMATCH,    /* past_value shape != past_key shape; 4, first axis */
  IS_CONTRACT_PAST_SHAPE,       /* past_key not [B, Nkv, Sp, H]; 3, axis 0/1/3 */
  IS_CONTRACT_SEQ_OVERFLOW,     /* Sp + Sc overflows; 3, 2 */
  IS_CONTRACT_INDICES_SHAPE,    /* selected_indices not [B, 1|N, Sq, K]; 5, axis 0/1/2 */
  IS_CONTRACT_INDICES_WIDTH,    /* K == 0; 5, 3 */
  IS_CONTRACT_OUTPUT_SHAPE,     /* Y shape != query shape; 100, first axis (-1: rank) */
  IS_CONTRACT_PRESENT_SHAPE,    /* present neither growing nor capacity; 101/102, axis */
  IS_CONTRACT_BIAS_RANK,        /* bias rank > 4; 6, -1 */
  IS_CONTRACT_BIAS_BROADCAST,   /* a bias dim neither 1 nor the target's; 6, bias axis */
  IS_CONTRACT_CAPACITY_BIAS,    /* capacity present without a bias; 6, -1 */
  IS_CONTRACT_COUNT
};

/* The code's name without its prefix, lower case ("arity_inputs"); "?" if unknown. */
const char *index_share_contract_name(int code);

/* The capture-error latch bit a captured replay raises on a bad index row. */
#define INDEX_SHARE_LATCH_BIT 512u

typedef struct index_share_attrs {
  long long num_heads;    /* required, > 0 */
  long long kv_num_heads; /* 0 when absent: defaults to num_heads */
  int has_scale;
  float scale; /* finite and > 0 when given; default 1/sqrt(head_size) */
} index_share_attrs;

/* Everything the math needs, resolved from attributes and shapes. */
typedef struct index_share_dims {
  dtype dt, index_dt;
  long long batch, q_heads, kv_heads, group, q_seq, current_seq, past_seq, total_seq;
  long long head_size, index_heads, selected_width;
  long long cache_seq; /* present row count: total_seq, or past_seq in capacity mode */
  int has_past, capacity_mode, n_outputs;
  int has_bias, bias_rank;
  long long bias_dims[4]; /* right-aligned into [B, N, Sq, cache_seq], 1 where absent */
  float sqrt_scale;       /* sqrtf(scale), scale = attribute or 1.0f / sqrtf((float)H) */
} index_share_dims;

/*
** Claim-time contract: arity, dtypes, ranks, shapes, attributes, bias
** broadcast, growing vs capacity present.  Fills *d and returns 0, or returns
** -1 with err->cls = OP_ERR_CONTRACT, naming the input (or 100 + output) and
** axis.  Index rows are not looked at.
*/
int index_share_validate(const index_share_attrs *a, const tensor *const *inputs, int n_inputs,
                         const tensor *const *outputs, int n_outputs, index_share_dims *d,
                         op_error *err);

/*
** Flat element offset into the bias for logical (b, h, q, k) of [B, N, Sq,
** cache_seq]: right-aligned broadcast, size-1 axes read index 0.
*/
long long index_share_bias_offset(const index_share_dims *d, long long b, long long h, long long q,
                                  long long k);

/*
** Capacity mode: valid_len[b] = 1 + the largest column k whose bias value at
** (b, h, q, k) is finite for some h, q (0 if none); write_pos[b] =
** valid_len[b] - current_seq, or 0 when that would be negative.
*/
void index_share_capacity_frontier(const index_share_dims *d, const tensor *bias, long long *valid_len,
                                   long long *write_pos);

/*
** The six index-row rules against bound[b] (total_seq when growing, valid_len
** in capacity mode), rows in (batch, index head, query) order, columns left to
** right; the first violation is reported.  0, or -1 with err->cls = OP_ERR_INDEX.
*/
int index_share_validate_indices(const index_share_dims *d, const tensor *indices, const long long *bound,
                                 op_error *err);

/* Optional intermediate payloads, each [B, N, Sq, K] f32, for golden boundaries:
** scores (after bias) and probabilities, with unused columns left untouched. */
typedef struct index_share_trace {
  float *scores, *probs;
} index_share_trace;

/*
** Validates (contract, then index rows) and computes the outputs, whose
** tensors must be allocated with the shapes and dtype the contract expects.
** Returns 0, or -1 with err set (outputs then untouched).
*/
int oracle_index_share_run(const index_share_attrs *a, const tensor *const *inputs, int n_inputs,
                           tensor *const *outputs, int n_outputs, index_share_trace *trace, op_error *err);

#endif
