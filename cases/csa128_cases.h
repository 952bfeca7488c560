/*
** csa128_cases.h: CompressedSparseAttention ratio-128 cases: the spec
** grammar, the tensors each step of a case stands for, the families'
** enumerators and the ratio-128 part of the gate suite (DESIGN.md "Cases,
** ids, corpus"; operator: seed 003_9308a65268dfd821.txt, oracle/csa.h,
** oracle/SPEC.md "CompressedSparseAttention, ratio 128").
**
** A case is a chain of steps over one sequence per batch row.  Step 0 feeds
** `prefill` tokens at positions [start, start + prefill); each of the
** `decode` steps after it feeds one more token.  So step s has
**   S     = prefill (s = 0) or 1
**   total = start + prefill + s          (input 9, the cursor after the step)
** and the harness threads step s's present_compressed_kv and
** present_compression_carry (outputs 1, 2) in as step s + 1's
** past_compressed_kv and past_compression_carry (inputs 6, 7).
**
** Spec grammar.  One line of space-separated key=value tokens, written in
** this order (every family has every key; only csa128.contract has
** `contract`):
**
**   family=F op=CompressedSparseAttention ratio=128 cache=f32|fp8
**   b=B heads=H window=W start=T0 prefill=P decode=D cap=R
**   bias=none|[]|D0x..xDr sink=neginf|zero|large|rand scale=none|HEX
**   [contract=NAME] seed=S
**
**   cache    f32 ("f32", 512-float records) or fp8 ("fp8_e4m3_block64",
**            583-byte records)
**   b, heads batch and num_heads
**   window   1..128: current_kv holds the last L = min(window, total)
**            tokens of the step (the dense window source)
**   start    tokens before step 0 (0: a fresh sequence; > 0: a synthetic
**            past cache and carry, see below)
**   prefill  S of step 0; decode: the number of 1-token steps after it
**   cap      the fixed record capacity Rp = Rc of every step's caches
**   bias     none; [] (rank 0); or 1 to 4 dims joined by 'x', right-aligned
**            against [B, heads, S, 128 + cap]; every step uses the same
**            shape, so its S axis is 1 unless every step has that S
**   sink     head_sink: -inf, +0, 30, or a bell-shaped value per head
**   scale    none, or the attribute as C99 "%a" of the float (0x1p-4)
**   contract csa_contract_name() of the one violation built on top of the
**            valid single-step configuration the other tokens describe
**   seed     the data seed (unsigned 64-bit decimal)
**
** Families:
**   csa128.chain     start=0: a prefill, then decode steps (0 or more)
**   csa128.state     start > 0: step 0 starts from a synthetic state
**   csa128.contract  decode=0; the oracle must reject the one step with
**                    OP_ERR_CONTRACT and rule = the code (cases_csa_expected)
**   csa128.tiles     start=0 chains and synthetic starts (any start) of
**                    1..4 decode steps whose heads (8 and up), batch,
**                    prefill and capacity make the fast attention's scores
**                    and values passes take their wide tiles, or one of
**                    them, or neither
**                    (device/kernels/csa_attention_abi.h)
** chain, state and tiles describe operator-valid chains: cap >= final total
** / 128 and the bias broadcasts at every step (the parser checks that).
**
** Examples (each one line in a real spec):
**   family=csa128.chain op=CompressedSparseAttention ratio=128 cache=fp8 b=2
**     heads=1 window=128 start=0 prefill=129 decode=130 cap=3
**     bias=1x1x1x131 sink=large scale=none seed=7
**   family=csa128.state op=CompressedSparseAttention ratio=128 cache=f32 b=1
**     heads=2 window=64 start=1048574 prefill=1 decode=2 cap=8192 bias=none
**     sink=rand scale=0x1p-4 seed=99
**   family=csa128.contract op=CompressedSparseAttention ratio=128 cache=f32
**     b=1 heads=1 window=128 start=256 prefill=1 decode=0 cap=2 bias=[]
**     sink=zero scale=none contract=past_capacity seed=3
**
** Tensors: element i of a stream is cases_rng_u64(seed, stream, step, i)
** made into a value (cases/rng.h), bell-shaped (cases_rng_normalish) unless
** said otherwise.  Token streams are indexed by absolute position, so the
** chain is coherent: the rng "step" argument is the batch row and i =
** pos * 512 + d, the same whichever case step reads the token.
**   current_kv [B, L, 512]             the kv stream at positions total - L ..
**   compressor_kv, _gate [B, S, 512]   their streams at total - S .. total - 1
**   query [B, S, heads, 512]           fresh every step
**   compressor_ape [128, 512]          0.5 * bell; compressor_norm [512]
**                                      uniform [0.5, 1.5); both per case
**   seqlens_k [B] = total; total_sequence_length [] = total
**   head_sink [heads]                  per case, from sink=
**   attention_bias                     bell, fresh every step
**   past (step 0 only)  start = 0: zero records, carry kv +0 / score -inf.
**     start > 0: records [0, start / 128) are random records (512 bell
**     values, the tail dims rounded to bf16) written the way the oracle
**     writes them: FP8 block-quantized plus a bf16 tail (fp8), or that
**     record dequantized (f32), so both formats hold the same values;
**     records from start / 128 to cap are zero bytes.  Carry slots below
**     start % 128 hold a bell kv and a bell score; the slots from there on
**     are (+0, -inf), the state a reset leaves: a reachable carry.
**   outputs              zeros, with the shapes the contract expects
** csa128.contract mutates the valid tensors (oracle/csa.h's order of
** checks decides which single mutation reaches which code); a mutated
** tensor keeps deterministic junk bytes, and a tensor with a negative dim
** has data NULL.
*/
#ifndef CASES_CSA128_CASES_H
#define CASES_CSA128_CASES_H

#include "cases/csa_case_util.h"
#include "oracle/csa.h"

#include <stddef.h>
#include <stdio.h>

#define CSA_CASE_SPEC_MAX 1024
#define CASES_CSA_BUDGET_DEFAULT ((size_t)256 << 20)

typedef enum csa_family {
  CSA_FAMILY_CHAIN = 0,
  CSA_FAMILY_STATE,
  CSA_FAMILY_CONTRACT,
  CSA_FAMILY_TILES,
  CSA_FAMILY_COUNT
} csa_family;

typedef struct csa_case {
  csa_family family;
  csa_cache_format format; /* CSA_CACHE_F32 or CSA_CACHE_FP8 */
  long long batch, heads, window, start, prefill, decode, capacity;
  int bias_rank; /* -1: no bias; else 0..4 */
  long long bias_shape[4];
  csa_sink sink;
  int has_scale;
  float scale;
  int contract; /* enum csa_contract; CSA_CONTRACT_NONE outside csa128.contract */
  unsigned long long seed;
  /* Not part of the spec: cases_csa_materialize refuses steps whose tensors
  ** need more bytes than this; 0 means CASES_CSA_BUDGET_DEFAULT. */
  size_t budget_bytes;
} csa_case;

const char *cases_csa_family_name(csa_family f); /* "csa128.chain", ... */

/*
** Parses a spec.  Strict: an unknown, repeated, missing or foreign key, a
** bad value, or a spec its family does not allow fails.  Tokens may come in
** any order; cases_csa_format gives the canonical text.  0, or -1 with err
** naming the token ("bad value in token 'b=0'") or the missing key.
*/
int cases_csa_parse(const char *spec, csa_case *c, char *err, size_t err_len);

/* Writes the canonical spec of c.  0, or -1 when len is too small. */
int cases_csa_format(const csa_case *c, char *spec, size_t len);

/* The case id of c's canonical spec ("csa128.chain.1f3c9a02").  0 or -1. */
int cases_csa_id(const csa_case *c, char *id, size_t len);

/* The number of steps of the chain: 1 + decode. */
int cases_csa_steps(const csa_case *c);

/*
** 1 when the case expects the oracle (and the device) to reject it, with
** *code (may be NULL) the csa_contract code; 0 when every step must succeed.
*/
int cases_csa_expected(const csa_case *c, int *code);

/*
** Allocates and fills the tensors of step `step` (0 <= step < steps).
** inputs: CSA_INPUT_COUNT entries, the first *n_inputs meaningful (11, or
** 20 with the bias or a ratio-4 input), absent ones dt == DTYPE_NONE.
** outputs: CSA_OUTPUT_COUNT entries, zero-filled, *n_outputs of them meant.
** At step 0 inputs 6 and 7 hold the initial past.  At step > 0 inputs 6 and
** 7 have their dt, rank and shape set but data NULL: the harness puts the
** previous step's outputs 1 and 2 there (cases_csa_release then frees
** whatever data they hold).  Every entry of both arrays is either allocated
** or zeroed, also after a failure.  Refuses a step whose tensors (the
** threaded past included) need more than the case's budget: "case needs N
** bytes, over the budget of M".  0, or -1 with err set.
*/
int cases_csa_materialize(const csa_case *c, int step, tensor inputs[CSA_INPUT_COUNT], int *n_inputs,
                          tensor outputs[CSA_OUTPUT_COUNT], int *n_outputs, csa_attrs *attrs, char *err,
                          size_t err_len);

/* Frees every data pointer of the two arrays (and NULLs it). */
void cases_csa_release(tensor inputs[CSA_INPUT_COUNT], tensor outputs[CSA_OUTPUT_COUNT]);

/*
** Emits `count` canonical specs of family ("csa128.chain", "csa128.state",
** "csa128.contract", "csa128.tiles"), case number i cycling through the
** family's combinations (cases_csa_family_combos) and drawing the rest from
** (seed, i).  The number emitted, or -1 for an unknown family.
*/
int cases_csa_enumerate(const char *family, int count, unsigned long long seed,
                        void (*emit)(const char *spec, void *ctx), void *ctx);

/* How many combinations one pass over a family makes; -1 if unknown. */
int cases_csa_family_combos(const char *family);

/*
** Writes the ratio-128 gate suite, one spec a line, grouped by family (>= 300
** lines at scale 1).  Fails (-1) if two specs would share an id.  The number
** of lines, or -1.
*/
int cases_csa_write_suite(FILE *out, int per_family_scale);

/*
** Writes the ratio-128 nightly suite: per family, the gate suite's lines
** (scale 1), then the nightly additions from their own seed: chains of up
** to 300 steps, batches up to 8, starts out to 2^20 - 128 with b up to 4,
** more contract seeds, and tiles cases of up to 264 heads, whose decode
** steps take wide tiles too.  Fails (-1) if two specs would share an id.  The
** number of lines, or -1.
*/
int cases_csa_write_nightly(FILE *out);

#endif
