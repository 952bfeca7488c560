/*
** shard.h: `--shard K/N`, a deterministic partition of a suite's cases.
**
** The rule (a contract: merged shard databases rely on it):
**   case id C belongs to shard  (XXH3_64bits(C) mod N) + 1,
** where XXH3_64bits is libxxhash's 64-bit XXH3 of the id's bytes (no NUL),
** seed 0.  K is 1-based, 1 <= K <= N <= SHARD_MAX.  So every case is in
** exactly one shard of N, a case keeps its shard when the suite around it
** grows or shrinks (the partition depends on the id alone, never on the
** suite's order or size), and XXH3's output is frozen across releases.
** --filter and --shard compose: a run takes the cases that match both.
*/
#ifndef SHARD_H
#define SHARD_H

#include <stddef.h>

#define SHARD_MAX 4096u

typedef struct shard {
  unsigned k, n;  /* this run is shard k of n, 1 <= k <= n */
  char text[24]; /* "K/N", as stored in runs.shard */
} shard;

/* The whole suite: shard 1/1. */
void shard_all(shard *s);

/*
** Parses "K/N" (decimal, 1 <= K <= N <= SHARD_MAX) into *out.  0 on
** success; -1 with one line in err saying what was wrong.
*/
int shard_parse(const char *text, shard *out, char *err, size_t err_len);

/* The 1-based shard of n (n >= 1) that case_id belongs to. */
unsigned shard_of(const char *case_id, unsigned n);

/* True when case_id belongs to shard s. */
int shard_contains(const shard *s, const char *case_id);

#endif
