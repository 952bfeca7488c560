/*
** csa.h: the CompressedSparseAttention (CSA) operator's frozen CPU oracle,
** compression ratios 128 and 4 (seed 003_9308a65268dfd821.txt, DESIGN.md).
** Plain C whose every sum is serial (independent rows, heads, records and
** batch rows may run on several threads, oracle_threads.h); oracle/SPEC.md,
** sections "CompressedSparseAttention, ratio 128" and "..., ratio 4", gives
** every formula in the order it is computed, with seed line numbers.
**
** One call is one step: the compression update (carry slots, a record every
** 128th or 4th position), for ratio 4 the index-key update and the indexer's
** top-k selection, and then the sink attention that reads the updated cache.
** The caller threads present_* back in as the next step's past_*.
**
** Inputs (index: name [shape] dtype), seed:2617-2807 (ratio 4: see below):
**    0 query                  [B, S, heads, 512] f32, S > 0
**    1 current_kv             [B, L, 512] f32 (the dense window source)
**    2 compressor_kv          [B, S, 512] f32 (ratio 4: [B, S, 1024])
**    3 compressor_gate        [B, S, 512] f32 (ratio 4: [B, S, 1024])
**    4 compressor_ape         [128, 512] f32 (ratio 4: [4, 1024])
**    5 compressor_norm        [512] f32
**    6 past_compressed_kv     [B, Rp, 512] f32 (cache_format "f32") or
**                             [B, Rp, 583] u8 ("fp8_e4m3_block64"; ratio 4 only this)
**    7 past_compression_carry [B, 128, 2, 512] f32 (slot, {kv, score}, dim)
**                             (ratio 4: [B, 8, 2, 1024])
**    8 seqlens_k              [B] i32 (required; its values are not read)
**    9 total_sequence_length  [] i64 (the cursor: tokens seen after this step)
**   10 head_sink              [heads] f32
**   11..18                    the ratio-4 index stream (enum csa_input):
**                             required for ratio 4, absent for ratio 128
**   19 attention_bias         optional f32, rank <= 4, broadcast to
**                             [B, heads, S, 128 + Rc] (ratio 4: 128 + index_topk;
**                             candidate axis last)
** Outputs: 0 Y [B, S, heads, 512] f32; 1 present_compressed_kv [B, Rc, W]
** (same dtype and width W as input 6; Rc is its fixed capacity); 2
** present_compression_carry (the shape of input 7); ratio 4 adds 3..5
** (enum csa_output).
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
  CSA_IN_INDEX_QUERY = 11,     /* [B, S, IH, 128] f32 */
  CSA_IN_INDEX_WEIGHT = 12,    /* [B, S, IH] f32 */
  CSA_IN_INDEX_KV = 13,        /* [B, S, 256] f32: index_compressor_kv */
  CSA_IN_INDEX_GATE = 14,      /* [B, S, 256] f32: index_compressor_gate */
  CSA_IN_INDEX_APE = 15,       /* [4, 256] f32: index_compressor_ape */
  CSA_IN_INDEX_NORM = 16,      /* [128] f32: index_compressor_norm */
  CSA_IN_PAST_INDEX_KEY = 17,  /* [B, Rpi, 68] u8 */
  CSA_IN_PAST_INDEX_CARRY = 18,/* [B, 8, 2, 256] f32 */
  CSA_IN_INDEX_LAST = 18,
  CSA_IN_BIAS = 19,
  CSA_INPUT_COUNT
};
enum csa_output {
  CSA_OUT_Y = 0,
  CSA_OUT_PRESENT_COMPRESSED_KV,
  CSA_OUT_PRESENT_CARRY,
  CSA128_OUTPUT_COUNT,               /* ratio 128 has exactly outputs 0..2 */
  CSA_OUT_PRESENT_INDEX_KEY = 3,     /* ratio 4: [B, Rci, 68] u8 */
  CSA_OUT_PRESENT_INDEX_CARRY = 4,   /* ratio 4: [B, 8, 2, 256] f32 */
  CSA_OUT_SELECTED = 5,              /* ratio 4, optional: [B, IH, S, topk] i32 */
  CSA_OUTPUT_MAX = 6
};
#define CSA_OUTPUT_COUNT CSA128_OUTPUT_COUNT /* the ratio-128 count, kept for its callers */

typedef enum csa_cache_format {
  CSA_CACHE_UNKNOWN = 0,
  CSA_CACHE_F32,  /* "f32": the dequantized f32 view, 512 floats a record */
  CSA_CACHE_FP8,  /* "fp8_e4m3_block64": the hybrid 583-byte record */
  CSA_CACHE_FP4   /* "fp4_e2m1_block32": known, refused for ratio 128 */
} csa_cache_format;

/*
** Contract codes (op_error.rule when cls == OP_ERR_CONTRACT), numbered in the
** order csa_validate and csa_validate_cursor test them; the first failure is
** reported.  Codes marked "r4" apply to ratio 4 only, "r128" to ratio 128
** only.  Each comment says what op_error.input / .axis name (in = input
** index, 100 + o = output o, -1 = nothing).  SPEC.md gives the seed lines.
*/
enum csa_contract {
  CSA_CONTRACT_NONE = 0,
  CSA_CONTRACT_RATIO,            /* compression_ratio not 4 or 128; -1, -1 */
  CSA_CONTRACT_CACHE_FORMAT,     /* cache_format not a known name; -1, -1 */
  CSA_CONTRACT_NUM_HEADS,        /* num_heads <= 0; -1, -1 */
  CSA_CONTRACT_SCALE,            /* scale not finite; -1, -1 */
  CSA_CONTRACT_ARITY_INPUTS,     /* n_inputs not in 11..20 (r4: 19..20); -1, -1 */
  CSA_CONTRACT_REQUIRED_INPUT,   /* one of inputs 0..10 absent; in, -1 */
  CSA_CONTRACT_RATIO4_INPUT,     /* r128: one of inputs 11..18 present; in, -1 */
  CSA_CONTRACT_INDEX_INPUT,      /* r4: one of inputs 11..18 absent; in, -1 */
  CSA_CONTRACT_ARITY_OUTPUTS,    /* n_outputs != 3 (r4: not 5 or 6); -1, -1 */
  CSA_CONTRACT_INDEX_HEAD_DIM,   /* r4: index_head_dim != 128; -1, -1 */
  CSA_CONTRACT_RATIO4_FORMAT,    /* r4: cache_format not fp8_e4m3_block64; -1, -1 */
  CSA_CONTRACT_FP4_FORMAT,       /* r128: cache_format fp4; -1, -1 */
  CSA_CONTRACT_HEAD_DIM,         /* head_dim != 512; -1, -1 */
  CSA_CONTRACT_ROPE_DIM,         /* qk_rope_head_dim != 64; -1, -1 */
  CSA_CONTRACT_DTYPE,            /* an input 0..10 (r4: 0..18) has the wrong dtype; in, -1 */
  CSA_CONTRACT_INDEX_HEADS,      /* r4: index_num_heads <= 0; -1, -1 */
  CSA_CONTRACT_TOPK,             /* r4: index_topk < 1 or > CSA4_TOPK_MAX; -1, -1 */
  CSA_CONTRACT_RANK,             /* an input 0..10 (r4: 0..18) has the wrong rank; in, -1 */
  CSA_CONTRACT_NEGATIVE_DIM,     /* a dimension < 0; in, axis */
  CSA_CONTRACT_EMPTY_QUERY,      /* query.shape[1] (S) == 0; 0, 1 */
  CSA_CONTRACT_SHAPE,            /* a fixed or same-as axis differs; in, axis */
  CSA_CONTRACT_BIAS_DTYPE,       /* attention_bias not f32; 19, -1 */
  CSA_CONTRACT_BIAS_RANK,        /* attention_bias rank > 4; 19, -1 */
  CSA_CONTRACT_BIAS_BROADCAST,   /* bias axis neither 1 nor B/heads/S; 19, bias axis */
  CSA_CONTRACT_OUTPUT_DTYPE,     /* output dtype wrong; 100 + o, -1 */
  CSA_CONTRACT_OUTPUT_SHAPE,     /* output shape wrong; 100 + o, axis (-1: rank) */
  CSA_CONTRACT_BIAS_CANDIDATES,  /* bias last axis neither 1 nor 128 + Rc (r4: 128 + topk); 19, axis */
  /* execute-time cursor rules (csa_validate_cursor): they read input 9 */
  CSA_CONTRACT_TOTAL_NEGATIVE,   /* total_sequence_length < 0; 9, -1 */
  CSA_CONTRACT_TOTAL_SHORT,      /* total < S (start would be negative); 9, -1 */
  CSA_CONTRACT_PAST_CAPACITY,    /* Rp < start / ratio; 6, 1 (r4 index key: 17, 1) */
  CSA_CONTRACT_PRESENT_CAPACITY, /* Rc < total / ratio; 101, 1 (r4 index key: 103, 1) */
  CSA_CONTRACT_COUNT
};

/* The code's name without its prefix, lower case ("ratio4_input"); "?" if unknown. */
const char *csa_contract_name(int code);

/* Ratio-4 geometry (seed validate_ratio4_claim and csa_workspace_bytes). */
#define CSA4_RATIO 4
#define CSA4_SLOTS 8            /* carry slots: 0..3 the previous block, 4..7 the current one */
#define CSA4_SOURCE_WIDTH 1024  /* compressor_kv / gate width: 2 x 512 (slots 0-3 read 0..511, 4-7 read 512..1023) */
#define CSA4_INDEX_DIM 128      /* index_head_dim */
#define CSA4_INDEX_SOURCE 256   /* index compressor width: 2 x 128 */
#define CSA4_INDEX_RECORD_BYTES 68 /* 4 x (UE8M0 scale + 16 bytes of packed E2M1) */
#define CSA4_TOPK_MAX 512       /* the seed's pooled selection cap (min(records, 512)) */

typedef struct csa_attrs {
  long long compression_ratio; /* 4 or 128 */
  const char *cache_format;    /* NULL means "f32" (the seed's default) */
  long long num_heads;         /* required, > 0 */
  long long head_dim;          /* required; must be 512 (0 = absent, rejected) */
  long long qk_rope_head_dim;  /* 0 when absent (the seed's default), must be 64 */
  int has_scale;
  float scale; /* 0 (or absent) means 1/sqrt(512); otherwise finite, used as is */
  /* ratio 4 only (ignored for ratio 128) */
  long long index_num_heads; /* IH, required, > 0 */
  long long index_head_dim;  /* must be 128 (0 = absent, rejected) */
  long long index_topk;      /* *ours*: the selection width, 1..512; in the 6-output
                                config it must equal selected_indices.shape[3] */
} csa_attrs;

/* Everything the math needs, resolved from attributes, shapes and the cursor. */
typedef struct csa_dims {
  csa_cache_format format;
  long long batch, seq, heads, dim;
  long long kv_len;            /* current_kv.shape[1] (physical) */
  long long past_capacity;     /* Rp = past_compressed_kv.shape[1] */
  long long present_capacity;  /* Rc = present_compressed_kv.shape[1] */
  long long record_width;      /* elements a record: 512 (f32) or 583 (u8) */
  long long score_stride;      /* 128 + Rc (ratio 4: 128 + topk): the candidate axis (seed:1565, 1697) */
  int has_bias;
  long long bias_dims[4]; /* right-aligned into [B, heads, S, score_stride], 1 where absent */
  float scale;            /* resolved: attribute, or 1.0f / sqrtf(512.0f) */
  /* ratio 4 (zero for ratio 128) */
  long long ratio;                  /* 4 or 128 */
  long long index_heads, index_dim; /* IH, 128 */
  long long topk;                   /* index_topk */
  long long index_past_capacity;    /* Rpi = past_index_key.shape[1] */
  long long index_present_capacity; /* Rci = present_index_key.shape[1] */
  int has_selected;                 /* n_outputs == 6 */
  /* cursor, filled by csa_validate_cursor */
  long long total, start;      /* start = total - S, the first new position */
  long long past_records;      /* start / ratio: records copied from the past (both caches) */
  long long present_records;   /* total / ratio: the logical record count after the step */
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
** Ratio 128: validates (contract, then cursor) and computes the three
** outputs, whose tensors must be allocated with the shapes and dtypes the
** contract expects.  Returns 0, or -1 with err set (outputs then untouched);
** a call that passes the ratio-4 contract is refused with
** CSA_CONTRACT_RATIO (use oracle_csa4_run).
*/
int oracle_csa128_run(const csa_attrs *a, const tensor *const *inputs, int n_inputs,
                      tensor *const *outputs, int n_outputs, csa_trace *trace, op_error *err);

/*
** Ratio-4 stage payloads (golden boundaries, SPEC.md "ratio 4"); any pointer
** may be NULL; nothing is written unless the run succeeds.
**  records:       [B, Rc, 512] f32, main records after the RoPE tail, before
**                 the FP8 write (CompressionUpdate); only emitted rows written.
**  index_records: [B, Rci, 128] f32, index records after the Hadamard scale
**                 and bf16, before the FP4 write (IndexKeyUpdate); emitted rows.
**  index_query:   [B, S, IH, 128] f32, each finalized index query after the
**                 FP4 round trip (IndexQueryFinalize).
**  index_scores:  [B, S, Rci] f32, each record's score for the query row,
**                 -inf for records at or beyond the row's causal limit
**                 (IndexScoring).
**  selection:     [B, S, topk] i32, the row's selected records, -1 padded
**                 (Selection); the same for every index head.
**  scores:        [B, S, heads, 128 + topk] f32, candidate scores after scale
**                 and bias, -inf for every non-live column (CandidateAssembly).
**  output:        [B, S, heads, 512] f32, a copy of Y (SparseSinkSoftmaxAttention).
*/
typedef struct csa4_trace {
  float *records, *index_records, *index_query, *index_scores;
  int *selection;
  float *scores, *output;
} csa4_trace;

/*
** Ratio 4: validates (contract, then cursor) and computes the 5 or 6
** outputs (Y, present main cache and carry, present index key and carry,
** and optionally selected_indices), in the seed's stage order: main
** compression, index-key compression, index-query finalize, scoring,
** top-k selection, sparse sink attention.  0, or -1 with err set (outputs
** then untouched); a call that passes the ratio-128 contract is refused
** with CSA_CONTRACT_RATIO (use oracle_csa128_run).
*/
int oracle_csa4_run(const csa_attrs *a, const tensor *const *inputs, int n_inputs,
                    tensor *const *outputs, int n_outputs, csa4_trace *trace, op_error *err);

#endif
