/*
** csa.h: the CompressedSparseAttention (CSA) operator's frozen CPU oracle,
** ratio 128 only (seed 003_9308a65268dfd821.txt, DESIGN.md).  Plain serial
** C; oracle/SPEC.md, section "CompressedSparseAttention, ratio 128", gives
** every formula in the order it is computed, with seed line numbers.
**
** One call is one step: the compression update (carry slots, records every
** 128th position) and then the sink attention that reads the updated cache.
** The caller threads present_* back in as the next step's past_*.
**
** Inputs (index: name [shape] dtype), seed:2729-2807:
**    0 query                  [B, S, heads, 512] f32, S > 0
**    1 current_kv             [B, L, 512] f32 (the dense window source)
**    2 compressor_kv          [B, S, 512] f32
**    3 compressor_gate        [B, S, 512] f32
**    4 compressor_ape         [128, 512] f32
**    5 compressor_norm        [512] f32
**    6 past_compressed_kv     [B, Rp, 512] f32 (cache_format "f32") or
**                             [B, Rp, 583] u8 ("fp8_e4m3_block64")
**    7 past_compression_carry [B, 128, 2, 512] f32 (slot, {kv, score}, dim)
**    8 seqlens_k              [B] i32 (required; its values are not read)
**    9 total_sequence_length  [] i64 (the cursor: tokens seen after this step)
**   10 head_sink              [heads] f32
**   11..18                    ratio-4 index inputs: must be absent
**   19 attention_bias         optional f32, rank <= 4, broadcast to
**                             [B, heads, S, 128 + Rc] (candidate axis last)
** Outputs: 0 Y [B, S, heads, 512] f32; 1 present_compressed_kv [B, Rc, W]
** (same dtype and width W as input 6; Rc is its fixed capacity); 2
** present_compression_carry [B, 128, 2, 512] f32.
** An absent input is NULL, beyond n_inputs, or has dt == DTYPE_NONE.
*/
#ifndef ORACLE_CSA_H
#define ORACLE_CSA_H

#include "oracle/op_error.h"
#include "oracle/tensor.h"

#define CSA128_RATIO 128
#define CSA_HEAD_DIM 512
#define CSA_ROPE_DIM 64
#define CSA_NOPE_DIM 448 /* dims 0..447 are FP8 blocks, 448..511 the RoPE tail */
#define CSA_FP8_BLOCKS 7
#define CSA_FP8_RECORD_BYTES 583 /* 7 x (1 + 64) + 64 x 2 */
#define CSA_DENSE_WINDOW 128

enum csa_input {
  CSA_IN_QUERY = 0,
  CSA_IN_CURRENT_KV,
  CSA_IN_COMPRESSOR_KV,
  CSA_IN_COMPRESSOR_GATE,
  CSA_IN_COMPRESSOR_APE,
  CSA_IN_COMPRESSOR_NORM,
  CSA_IN_PAST_COMPRESSED_KV,
  CSA_IN_PAST_CARRY,
  CSA_IN_SEQLENS_K,
  CSA_IN_TOTAL_SEQ,
  CSA_IN_HEAD_SINK,
  CSA_IN_INDEX_FIRST = 11, /* 11..18: the ratio-4 index stream */
  CSA_IN_INDEX_LAST = 18,
  CSA_IN_BIAS = 19,
  CSA_INPUT_COUNT
};
enum csa_output { CSA_OUT_Y = 0, CSA_OUT_PRESENT_COMPRESSED_KV, CSA_OUT_PRESENT_CARRY, CSA_OUTPUT_COUNT };

typedef enum csa_cache_format {
  CSA_CACHE_UNKNOWN = 0,
  CSA_CACHE_F32,  /* "f32": the dequantized f32 view, 512 floats a record */
  CSA_CACHE_FP8,  /* "fp8_e4m3_block64": the hybrid 583-byte record */
  CSA_CACHE_FP4   /* "fp4_e2m1_block32": known, refused for ratio 128 */
} csa_cache_format;

/*
** Contract codes (op_error.rule when cls == OP_ERR_CONTRACT), numbered in the
** order csa_validate and csa_validate_cursor test them; the first failure is
** reported.  Each comment says what op_error.input / .axis name (in = input
** index, 100 + o = output o, -1 = nothing).  SPEC.md gives the seed lines.
*/
enum csa_contract {
  CSA_CONTRACT_NONE = 0,
  CSA_CONTRACT_RATIO,            /* compression_ratio not 4 or 128; -1, -1 */
  CSA_CONTRACT_RATIO4_MISSING,   /* ratio 4: not in this oracle yet (not a seed rule); -1, -1 */
  CSA_CONTRACT_CACHE_FORMAT,     /* cache_format not a known name; -1, -1 */
  CSA_CONTRACT_NUM_HEADS,        /* num_heads <= 0; -1, -1 */
  CSA_CONTRACT_SCALE,            /* scale not finite; -1, -1 */
  CSA_CONTRACT_ARITY_INPUTS,     /* n_inputs not in 11..20; -1, -1 */
  CSA_CONTRACT_REQUIRED_INPUT,   /* one of inputs 0..10 absent; in, -1 */
  CSA_CONTRACT_RATIO4_INPUT,     /* one of inputs 11..18 present; in, -1 */
  CSA_CONTRACT_ARITY_OUTPUTS,    /* n_outputs != 3; -1, -1 */
  CSA_CONTRACT_FP4_FORMAT,       /* cache_format fp4 with ratio 128; -1, -1 */
  CSA_CONTRACT_HEAD_DIM,         /* head_dim != 512; -1, -1 */
  CSA_CONTRACT_ROPE_DIM,         /* qk_rope_head_dim != 64; -1, -1 */
  CSA_CONTRACT_DTYPE,            /* an input 0..10 has the wrong dtype; in, -1 */
  CSA_CONTRACT_RANK,             /* an input 0..10 has the wrong rank; in, -1 */
  CSA_CONTRACT_NEGATIVE_DIM,     /* a dimension < 0; in, axis */
  CSA_CONTRACT_EMPTY_QUERY,      /* query.shape[1] (S) == 0; 0, 1 */
  CSA_CONTRACT_SHAPE,            /* a fixed or same-as axis differs; in, axis */
  CSA_CONTRACT_BIAS_DTYPE,       /* attention_bias not f32; 19, -1 */
  CSA_CONTRACT_BIAS_RANK,        /* attention_bias rank > 4; 19, -1 */
  CSA_CONTRACT_BIAS_BROADCAST,   /* bias axis neither 1 nor B/heads/S; 19, bias axis */
  CSA_CONTRACT_OUTPUT_DTYPE,     /* output dtype wrong; 100 + o, -1 */
  CSA_CONTRACT_OUTPUT_SHAPE,     /* output shape wrong; 100 + o, axis (-1: rank) */
  CSA_CONTRACT_BIAS_CANDIDATES,  /* bias last axis neither 1 nor 128 + Rc; 19, bias axis */
  /* execute-time cursor rules (csa_validate_cursor): they read input 9 */
  CSA_CONTRACT_TOTAL_NEGATIVE,   /* total_sequence_length < 0; 9, -1 */
  CSA_CONTRACT_TOTAL_SHORT,      /* total < S (start would be negative); 9, -1 */
  CSA_CONTRACT_PAST_CAPACITY,    /* Rp < start / 128 (past records to copy); 6, 1 */
  CSA_CONTRACT_PRESENT_CAPACITY, /* Rc < total / 128 (records to hold); 101, 1 */
  CSA_CONTRACT_COUNT
};

/* The code's name without its prefix, lower case ("ratio4_input"); "?" if unknown. */
const char *csa_contract_name(int code);

typedef struct csa_attrs {
  long long compression_ratio; /* 4 or 128; only 128 is implemented */
  const char *cache_format;    /* NULL means "f32" (the seed's default) */
  long long num_heads;         /* required, > 0 */
  long long head_dim;          /* required; must be 512 (0 = absent, rejected) */
  long long qk_rope_head_dim;  /* 0 when absent (the seed's default), must be 64 */
  int has_scale;
  float scale; /* 0 (or absent) means 1/sqrt(512); otherwise finite, used as is */
} csa_attrs;

/* Everything the math needs, resolved from attributes, shapes and the cursor. */
typedef struct csa_dims {
  csa_cache_format format;
  long long batch, seq, heads, dim;
  long long kv_len;            /* current_kv.shape[1] (physical) */
  long long past_capacity;     /* Rp = past_compressed_kv.shape[1] */
  long long present_capacity;  /* Rc = present_compressed_kv.shape[1] */
  long long record_width;      /* elements a record: 512 (f32) or 583 (u8) */
  long long score_stride;      /* 128 + Rc: the candidate axis (seed:1565) */
  int has_bias;
  long long bias_dims[4]; /* right-aligned into [B, heads, S, 128 + Rc], 1 where absent */
  float scale;            /* resolved: attribute, or 1.0f / sqrtf(512.0f) */
  /* cursor, filled by csa_validate_cursor */
  long long total, start;      /* start = total - S, the first new position */
  long long past_records;      /* start / 128: records copied from the past */
  long long present_records;   /* total / 128: the logical record count after the step */
  long long kv_used;           /* min(L, total): the logical prefix of current_kv */
  long long kv_base;           /* total - kv_used: absolute position of current_kv row 0 */
} csa_dims;

/*
** Claim-time contract (arity, dtypes, ranks, shapes, attributes, cache
** format, ratio-4-only inputs, bias broadcast) and the output shapes.  Reads
** no tensor data.  Fills *d (not the cursor fields) and returns 0, or returns
** -1 with err->cls = OP_ERR_CONTRACT naming the input (or 100 + output) and axis.
*/
int csa_validate(const csa_attrs *a, const tensor *const *inputs, int n_inputs,
                 const tensor *const *outputs, int n_outputs, csa_dims *d, op_error *err);

/*
** Execute-time cursor rules: reads total_sequence_length and fills the
** cursor fields of *d.  0, or -1 with err->cls = OP_ERR_CONTRACT.
*/
int csa_validate_cursor(csa_dims *d, const tensor *total, op_error *err);

/*
** Optional stage payloads for golden-boundary work; any pointer may be NULL.
**  records: [B, Rc, 512] f32, the record of each emitted record index after
**           the RoPE tail and before the cache write (CompressionUpdate);
**           other record rows are left untouched.
**  scores:  [B, S, heads, 128 + Rc] f32, each row's candidate scores after
**           scale and bias, -inf for every column that is no live candidate
**           (CandidateAssembly).
**  output:  [B, S, heads, 512] f32, a copy of Y (SparseSinkSoftmaxAttention).
** Nothing is written unless the run succeeds.
*/
typedef struct csa_trace {
  float *records, *scores, *output;
} csa_trace;

/*
** Validates (contract, then cursor) and computes the three outputs, whose
** tensors must be allocated with the shapes and dtypes the contract expects.
** Returns 0, or -1 with err set (outputs then untouched).
*/
int oracle_csa128_run(const csa_attrs *a, const tensor *const *inputs, int n_inputs,
                      tensor *const *outputs, int n_outputs, csa_trace *trace, op_error *err);

#endif
