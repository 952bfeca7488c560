/*
** csa4_cases.h: CompressedSparseAttention ratio-4 cases: the spec grammar,
** the tensors each step of a case stands for, the families' enumerators and
** the ratio-4 part of the gate suite (DESIGN.md "Cases, ids, corpus";
** operator: seed 003_9308a65268dfd821.txt, oracle/csa.h, oracle/SPEC.md
** "CompressedSparseAttention, ratio 4").  The ratio-128 twin is
** cases/csa128_cases.h; both share the spec tokenizer, the rng and the
** helpers of cases/csa_case_util.h.
**
** A case is a chain of steps over one sequence per batch row.  Step 0 feeds
** `prefill` tokens at positions [start, start + prefill); each of the
** `decode` steps after it feeds one more token.  So step s has
**   S     = prefill (s = 0) or 1
**   total = start + prefill + s          (input 9, the cursor after the step)
** and the harness threads step s's outputs 1, 2, 3, 4 (present main cache,
** main carry, index key cache, index carry) in as step s + 1's inputs 6, 7,
** 17, 18 (past_compressed_kv, past_compression_carry, past_index_key,
** past_index_carry).
**
** Spec grammar.  One line of space-separated key=value tokens, written in
** this order (`ties` only in csa4.ties, `contract` and `at` only in
** csa4.contract):
**
**   family=F op=CompressedSparseAttention ratio=4 b=B heads=H iheads=IH
**   topk=K window=W start=T0 prefill=P decode=D cap=R outputs=5|6
**   bias=none|[]|D0x..xDr sink=neginf|zero|large|rand scale=none|HEX
**   [ties=MODE] [contract=NAME at=SITE] [mag=E] seed=S
**
**   b, heads  batch and num_heads
**   iheads    index_num_heads (IH)
**   topk      index_topk, 1..512 (the selection width)
**   window    1..128: current_kv holds the last L = min(window, total)
**             tokens of the step (the dense window source)
**   start     tokens before step 0 (0: a fresh sequence; > 0: a synthetic
**             past, see below)
**   prefill   S of step 0; decode: the number of 1-token steps after it
**   cap       the fixed record capacity of every step's four caches: main
**             past/present (Rp = Rc) and index past/present (Rpi = Rci)
**   outputs   5, or 6 with selected_indices [B, IH, S, topk] i32
**   bias      none; [] (rank 0); or 1 to 4 dims joined by 'x', right-aligned
**             against [B, heads, S, 128 + topk]; every step uses the same
**             shape, so its S axis is 1 unless every step has that S
**   sink      head_sink: -inf, +0, 30, or a bell-shaped value per head
**   scale     none, or the attribute as C99 "%a" of the float (0x1p-4)
**   ties      how the index scores are made to tie (enum csa4_tie)
**   contract  csa_contract_name() of the one violation built on top of the
**             valid single-step configuration the other tokens describe
**   at        where that violation is: "none", "in<i>" (input i) or
**             "out<o>" (output o): the op_error.input the oracle must name
**             (cases_csa4_expected_site gives the axis too)
**   mag       optional, 1..24 (left out: 0): query, current_kv and
**             compressor_kv are scaled by 2^-E, exactly (a power of two), so
**             `bitgate shrink` can make a failing case's values smaller;
**             every spec without it keeps its text and id
**   seed      the data seed (unsigned 64-bit decimal)
**
** Families:
**   csa4.chain     start=0: a prefill, then decode steps (0 or more)
**   csa4.state     start > 0: step 0 starts from a synthetic state
**   csa4.ties      start=0 chains whose index scores tie exactly (ties=)
**   csa4.contract  decode=0; the oracle must reject the one step with
**                  OP_ERR_CONTRACT, rule = the code, input = `at`
**   csa4.tiles     start=0 chains of 1..4 decode steps whose heads (8 and
**                  up), topk and prefill make the fast attention's scores
**                  and values passes take their wide tiles, or one of
**                  them, or neither
**                  (device/kernels/csa_attention_abi.h)
** chain, state, ties and tiles describe operator-valid chains: cap >= final
** total / 4 and the bias broadcasts at every step (the parser checks that).
**
** Example (one line in a real spec):
**   family=csa4.chain op=CompressedSparseAttention ratio=4 b=2 heads=1
**     iheads=4 topk=7 window=128 start=0 prefill=5 decode=40 cap=12
**     outputs=6 bias=1x1x1x135 sink=large scale=none seed=7
**
** Tensors: element i of a stream is cases_rng_u64(seed, stream, step, i)
** made into a value (cases/rng.h), bell-shaped unless said otherwise.
** Token streams are indexed by absolute position, so a chain is coherent
** (the rng "step" argument is the batch row, i = pos * width + d).
**   current_kv [B, L, 512]                 the kv stream at total - L ..
**   compressor_kv, _gate [B, S, 1024]      their streams at total - S ..
**   index_compressor_kv, _gate [B, S, 256] likewise
**   query [B, S, heads, 512], index_query [B, S, IH, 128],
**   index_weight [B, S, IH]                per position (fresh each token)
**   compressor_ape [4, 1024], index_compressor_ape [4, 256]: 0.5 * bell;
**   compressor_norm [512], index_compressor_norm [128]: uniform [0.5, 1.5)
**   seqlens_k [B] = total; total_sequence_length [] = total
**   head_sink [heads] from sink=; attention_bias bell, fresh every step
**   past (step 0 only)  start = 0: zero records, carries kv +0 / score -inf.
**     start > 0: records [0, start / 4) of both caches are random records
**     written as the oracle writes them (nx_csa_fp8_record_write of bell
**     values; four nx_fp4_block32_quantize blocks of bell values); records
**     from start / 4 to cap are zero bytes.  Carry slots 0..3 hold the
**     previous block (bell kv, bell score) once start >= 4; slots 4 +
**     (0 .. start % 4 - 1) hold the current block; the rest are (+0, -inf):
**     a reachable carry.
**   ties: the index streams are replaced so that many records score the
**     same (see enum csa4_tie); the other tensors are as above.
**   outputs  zeros, with the shapes the contract expects
** csa4.contract mutates the valid tensors (oracle/csa.h's order of checks
** decides which single mutation reaches which code and site); a mutated
** tensor keeps deterministic junk bytes, and a tensor with a negative dim
** has data NULL.
*/
#ifndef CASES_CSA4_CASES_H
#define CASES_CSA4_CASES_H

#include "cases/csa_case_util.h"
#include "oracle/csa.h"

#include <stddef.h>
#include <stdio.h>

#define CSA4_CASE_SPEC_MAX 1024
#define CSA4_MAG_MAX 24 /* mag=E: values scaled by 2^-E, E <= 24 */
#define CASES_CSA4_BUDGET_DEFAULT ((size_t)256 << 20)

typedef enum csa4_family {
  CSA4_FAMILY_CHAIN = 0,
  CSA4_FAMILY_STATE,
  CSA4_FAMILY_TIES,
  CSA4_FAMILY_CONTRACT,
  CSA4_FAMILY_TILES,
  CSA4_FAMILY_COUNT
} csa4_family;

/*
** How csa4.ties makes index scores tie (spec names in quotes):
**   NONE    "none"   no crafting (every family but csa4.ties)
**   RELU    "relu"   index keys and queries are arranged so every dot is
**                    negative: relu makes every score +0
**   DUP     "dup"    the index compressor inputs of every block repeat one
**                    block's, so every record has the same key and score
**   ZERO    "zero"   index weights of -0 and +0 only: every score is +0
**                    (some heads add -0 * x products)
**   MIXED   "mixed"  a per-position mix of the three above, with ordinary
**                    positions in between
*/
typedef enum csa4_tie {
  CSA4_TIE_NONE = 0,
  CSA4_TIE_RELU,
  CSA4_TIE_DUP,
  CSA4_TIE_ZERO,
  CSA4_TIE_MIXED,
  CSA4_TIE_COUNT
} csa4_tie;

typedef struct csa4_case {
  csa4_family family;
  long long batch, heads, index_heads, topk, window, start, prefill, decode;
  long long capacity; /* Rp = Rc = Rpi = Rci */
  int outputs;        /* 5 or 6 */
  int bias_rank;      /* -1: no bias; else 0..4 */
  long long bias_shape[4];
  csa_sink sink;
  int has_scale;
  float scale;
  csa4_tie ties;     /* CSA4_TIE_NONE outside csa4.ties */
  int contract;      /* enum csa_contract; CSA_CONTRACT_NONE outside csa4.contract */
  int contract_site; /* the op_error.input the violation names: 0..19, 100 + o, or -1 */
  int mag;          /* mag=: 0 (absent) .. CSA4_MAG_MAX */
  unsigned long long seed;
  /* Not part of the spec: cases_csa4_materialize refuses steps whose tensors
  ** need more bytes than this; 0 means CASES_CSA4_BUDGET_DEFAULT. */
  size_t budget_bytes;
} csa4_case;

const char *cases_csa4_family_name(csa4_family f); /* "csa4.chain", ... */
const char *cases_csa4_tie_name(csa4_tie t);       /* "relu", ... */

/*
** Parses a spec.  Strict: an unknown, repeated, missing or foreign key, a
** bad value, or a spec its family does not allow fails.  Tokens may come in
** any order; cases_csa4_format gives the canonical text.  0, or -1 with err
** naming the token ("bad value in token 'b=0'") or the missing key.
*/
int cases_csa4_parse(const char *spec, csa4_case *c, char *err, size_t err_len);

/* Writes the canonical spec of c.  0, or -1 when len is too small. */
int cases_csa4_format(const csa4_case *c, char *spec, size_t len);

/* The case id of c's canonical spec ("csa4.chain.1f3c9a02").  0 or -1. */
int cases_csa4_id(const csa4_case *c, char *id, size_t len);

/* The number of steps of the chain: 1 + decode. */
int cases_csa4_steps(const csa4_case *c);

/*
** 1 when the case expects the oracle (and the device) to reject it, with
** *code (may be NULL) the csa_contract code; 0 when every step must succeed.
*/
int cases_csa4_expected(const csa4_case *c, int *code);

/*
** For a csa4.contract case: the op_error.input and .axis the rejection must
** name (either pointer may be NULL).  1 for a contract case, 0 otherwise
** (then both are -1).
*/
int cases_csa4_expected_site(const csa4_case *c, int *input, int *axis);

/*
** Every site (as contract_site: -1, an input, or 100 + an output) where
** csa4.contract can break rule `code` in a case with `outputs` outputs and,
** if has_bias, a bias; sites ascending.  The count (0 for a code that does
** not apply to ratio 4).
*/
#define CSA4_SITES_MAX (CSA_INPUT_COUNT + CSA_OUTPUT_MAX + 1)
int cases_csa4_contract_sites(int code, int outputs, int has_bias, int sites[CSA4_SITES_MAX]);

/*
** Allocates and fills the tensors of step `step` (0 <= step < steps).
** inputs: CSA_INPUT_COUNT entries, the first *n_inputs meaningful (19, or
** 20 with the bias), absent ones dt == DTYPE_NONE.  outputs: CSA_OUTPUT_MAX
** entries, zero-filled, *n_outputs (5 or 6) of them meant.  At step 0 inputs
** 6, 7, 17 and 18 hold the initial past.  At step > 0 they have their dt,
** rank and shape set but data NULL: the harness puts the previous step's
** outputs 1, 2, 3 and 4 there (cases_csa4_release then frees whatever data
** they hold).  Every entry of both arrays is either allocated or zeroed,
** also after a failure.  Refuses a step whose tensors (the threaded past
** included) need more than the case's budget: "case needs N bytes, over the
** budget of M".  0, or -1 with err set.
*/
int cases_csa4_materialize(const csa4_case *c, int step, tensor inputs[CSA_INPUT_COUNT], int *n_inputs,
                           tensor outputs[CSA_OUTPUT_MAX], int *n_outputs, csa_attrs *attrs, char *err,
                           size_t err_len);

/* Frees every data pointer of the two arrays (and NULLs it). */
void cases_csa4_release(tensor inputs[CSA_INPUT_COUNT], tensor outputs[CSA_OUTPUT_MAX]);

/*
** Emits `count` canonical specs of family ("csa4.chain", "csa4.state",
** "csa4.ties", "csa4.contract", "csa4.tiles"), case number i cycling
** through the family's combinations (cases_csa4_family_combos) and drawing
** the rest from (seed, i).  The number emitted, or -1 for an unknown family.
*/
int cases_csa4_enumerate(const char *family, int count, unsigned long long seed,
                         void (*emit)(const char *spec, void *ctx), void *ctx);

/* How many combinations one pass over a family makes; -1 if unknown. */
int cases_csa4_family_combos(const char *family);

/*
** Writes the ratio-4 gate suite, one spec a line, grouped by family (>= 300
** lines at scale 1).  Fails (-1) if two specs would share an id.  The number
** of lines, or -1.
*/
int cases_csa4_write_suite(FILE *out, int per_family_scale);

/*
** Writes the ratio-4 nightly suite: per family, the gate suite's lines
** (scale 1), then the nightly additions from their own seed: chains of up
** to 300 steps, batches up to 8, prefills up to 2051 with IH 64 and topk
** 512, starts at 2^16, 2^17 and 2^18, more ties and contract seeds, and
** tiles cases of up to 264 heads, whose decode steps take wide tiles too.
** Fails (-1) if two specs would share an id.  The number of lines, or -1.
*/
int cases_csa4_write_nightly(FILE *out);

#endif
