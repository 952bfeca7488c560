/*
** store_golden.c: golden stage payloads (DESIGN.md, "Golden boundaries").
**
** A payload is the raw bytes of one tensor at one pipeline stage of one case
** step, from the oracle or from the device's debug capture.  It is stored as
** a zlib stream (golden_deflate) with its uncompressed size in raw_bytes, so that
** a read can allocate exactly and check that it got every byte back.  The
** digest is the caller's (the harness's library digest) and is the payload's
** identity: equal digests mean equal payloads.
*/
#include "harness/store.h"
#include "harness/parallel.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* The key columns, bound as ?1..?6 by store_golden_bind_key. */
#define STORE_GOLDEN_KEY                                                                    \
  "case_id = ?1 AND step = ?2 AND stage = ?3 AND tensor = ?4 AND source = ?5"             \
  " AND oracle_version = ?6"

/* A payload's key: unique in golden_payloads. */
typedef struct store_golden_key {
  const char *case_id;
  int step;
  const char *stage, *tensor, *source;
  int oracle_version;
} store_golden_key;

/* The rest of a row, bound as ?7..?12. */
typedef struct store_golden_row {
  const char *dtype, *shape, *digest;
  size_t nRaw;                 /* uncompressed size */
  const unsigned char *zBlob;  /* zlib stream */
  size_t nBlob;
  long long run_id;            /* <= 0: none */
} store_golden_row;

static int store_golden_bind_key(sqlite3_stmt *st, const store_golden_key *k) {
  int rc = sqlite3_bind_text(st, 1, k->case_id, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_int(st, 2, k->step);
  if (!rc) rc = sqlite3_bind_text(st, 3, k->stage, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_text(st, 4, k->tensor, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_text(st, 5, k->source, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_int(st, 6, k->oracle_version);
  return rc;
}

/* Prepares zSql and binds the key, and the row when r is not NULL. */
static int store_golden_prepare(store *s, const char *zSql, const store_golden_key *k,
                                const store_golden_row *r, sqlite3_stmt **pSt) {
  int rc = store_prepare(s, zSql, pSt);
  if (!rc) rc = store_golden_bind_key(*pSt, k);
  if (!rc && r) {
    sqlite3_stmt *st = *pSt;
    rc = sqlite3_bind_text(st, 7, r->dtype, -1, SQLITE_STATIC);
    if (!rc) rc = sqlite3_bind_text(st, 8, r->shape, -1, SQLITE_STATIC);
    if (!rc) rc = sqlite3_bind_int64(st, 9, (sqlite3_int64)r->nRaw);
    if (!rc) rc = sqlite3_bind_text(st, 10, r->digest, -1, SQLITE_STATIC);
    if (!rc) rc = sqlite3_bind_blob64(st, 11, r->zBlob, r->nBlob, SQLITE_STATIC);
    if (!rc) rc = r->run_id > 0 ? sqlite3_bind_int64(st, 12, r->run_id) : sqlite3_bind_null(st, 12);
  }
  return rc;
}

/*
** Payloads larger than this are sampled first (GOLDEN_SAMPLE_BYTES at their
** start, deflated at level 1) to pick how the whole is deflated (below).
*/
#define GOLDEN_SAMPLE_MIN (256 * 1024)
#define GOLDEN_SAMPLE_BYTES (64 * 1024)

/* One deflate of n bytes at level into out (capacity *nOut); Z_OK or a zlib code, *nOut the stream's size. */
static int golden_deflate_with(const unsigned char *data, size_t n, int level, int strategy, unsigned char *out,
                               size_t *nOut) {
  const size_t step = (uInt)-1; /* zlib counts a call's bytes in a uInt */
  size_t in_left = n, out_left = *nOut;
  z_stream z;
  int zrc;
  memset(&z, 0, sizeof z);
  if ((zrc = deflateInit2(&z, level, Z_DEFLATED, 15, 8, strategy)) != Z_OK) return zrc;
  z.next_in = (Bytef *)data, z.next_out = out;
  do {
    if (!z.avail_in) z.avail_in = (uInt)(in_left < step ? in_left : step), in_left -= z.avail_in;
    if (!z.avail_out) z.avail_out = (uInt)(out_left < step ? out_left : step), out_left -= z.avail_out;
    zrc = deflate(&z, in_left || z.avail_in ? Z_NO_FLUSH : Z_FINISH);
  } while (zrc == Z_OK && (z.avail_out || out_left));
  *nOut = (size_t)(z.next_out - out);
  deflateEnd(&z);
  return zrc == Z_STREAM_END ? Z_OK : (zrc == Z_OK ? Z_BUF_ERROR : zrc);
}

/*
** Compresses n bytes of data into a malloc'd *pOut of *pnOut bytes; 0, or a
** zlib code / -1.  Any zlib stream reads back the same, so the choice is
** only time against size.  Small payloads (most of the gate's): level 6.
** Level 9's long match chains crawl on quantized payloads (IndexQueryFinalize's
** FP4 round trips: 1 MB/s at level 9, 11-13 at 6, for 17 % against 20 % of
** the raw size), and elsewhere 9 saves under a tenth of what 6 leaves.  A
** large payload is sampled: if level 1 leaves above 80 % of the sample, the
** whole is Huffman-coded alone (the present K/V caches, random half floats
** and 80 % of a nightly's bytes: 0.90 at level 6 at 35 MB/s, 0.92 this way
** at 127 MB/s); otherwise level 4 (IndexQueryFinalize 0.24 at 46 MB/s, the
** selections 0.125 at 153 MB/s against 25 at level 6).  Measured here on
** 2026-12-01 (docs/CORPUS.md): the nightly's oracle lane, pinning every
** payload, 246 s -> 201 s; the gate's store 186.6 -> 191.6 MiB (limit 200).
*/
static int golden_deflate(const void *data, size_t n, unsigned char **pOut, size_t *pnOut) {
  static const unsigned char empty[1];
  const unsigned char *in = data ? data : empty;
  int level = 6, strategy = Z_DEFAULT_STRATEGY, zrc;
  size_t cap;
  *pOut = NULL;
  if ((uLong)n != n) return -1;
  cap = compressBound((uLong)n);
  if (!(*pOut = malloc(cap))) return -1;
  if (n > GOLDEN_SAMPLE_MIN) {
    size_t sample = cap;
    zrc = golden_deflate_with(in, GOLDEN_SAMPLE_BYTES, 1, Z_DEFAULT_STRATEGY, *pOut, &sample);
    if (zrc != Z_OK) return zrc;
    level = 4;
    if (sample * 5 > (size_t)GOLDEN_SAMPLE_BYTES * 4) strategy = Z_HUFFMAN_ONLY;
  }
  *pnOut = cap;
  return golden_deflate_with(in, n, level, strategy, *pOut, pnOut);
}

/* One batch being written: the items and their zlib streams. */
typedef struct golden_batch {
  const store_golden_item *items;
  unsigned char **blobs;
  size_t *sizes;
  int *zrc;
} golden_batch;

static void golden_deflate_one(void *ctx, long long i, int thread) {
  golden_batch *b = ctx;
  (void)thread;
  b->zrc[i] = golden_deflate(b->items[i].data, b->items[i].n, &b->blobs[i], &b->sizes[i]);
}

/*
** Writes one compressed item inside the caller's transaction: inserts it;
** or, when the key exists, keeps an equal payload, replaces a different
** device payload, and refuses a different oracle payload.
*/
static int golden_write_one(store *s, const store_golden_item *it, const unsigned char *zBlob, size_t nBlob) {
  static const char zInsert[] =
    "INSERT INTO golden_payloads (case_id, step, stage, tensor, source, oracle_version,"
    " dtype, shape, raw_bytes, digest, payload, created_run_id)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) ON CONFLICT DO NOTHING";
  static const char zSelect[] = "SELECT digest FROM golden_payloads WHERE " STORE_GOLDEN_KEY;
  static const char zReplace[] =
    "UPDATE golden_payloads SET dtype = ?7, shape = ?8, raw_bytes = ?9, digest = ?10,"
    " payload = ?11, created_run_id = ?12 WHERE " STORE_GOLDEN_KEY;
  const store_golden_key k = {it->case_id, it->step, it->stage, it->tensor, it->source, it->oracle_version};
  const store_golden_row r = {it->dtype, it->shape, it->digest, it->n, zBlob, nBlob, it->run_id};
  sqlite3_stmt *st = NULL;
  const char *zStored;
  int rc = store_golden_prepare(s, zInsert, &k, &r, &st);
  if (!rc) rc = store_step_done(st);
  if (rc || sqlite3_changes(store_sqlite(s)) == 1) goto cleanup; /* error, or new */
  sqlite3_finalize(st); /* the key exists: compare digests */
  rc = store_golden_prepare(s, zSelect, &k, NULL, &st);
  if (!rc && (rc = sqlite3_step(st)) == SQLITE_ROW) rc = SQLITE_OK;
  if (rc) goto cleanup;
  zStored = (const char *)sqlite3_column_text(st, 0);
  if (it->digest && strcmp(zStored, it->digest) == 0) goto cleanup; /* the same payload again */
  if (!it->source || strcmp(it->source, "device") != 0) {
    rc = store_fail(s, "golden %s step %d %s/%s (%s, oracle v%d) is stored with digest %s; "
                    "refusing to replace it with %s", it->case_id, it->step, it->stage, it->tensor,
                    it->source ? it->source : "(null)", it->oracle_version, zStored,
                    it->digest ? it->digest : "(null)");
    goto cleanup;
  }
  sqlite3_finalize(st); /* a newer device capture replaces the older */
  rc = store_golden_prepare(s, zReplace, &k, &r, &st);
  if (!rc) rc = store_step_done(st);
cleanup:
  sqlite3_finalize(st);
  return rc;
}

/*
** Compression is the slow part of pinning (golden_deflate), so the batch
** is compressed on `threads` workers first; the writes
** then go in one transaction, all or none.
*/
int store_golden_put_many(store *s, const store_golden_item *items, int n, int threads) {
  golden_batch b = {items, calloc((size_t)n + 1, sizeof *b.blobs), calloc((size_t)n + 1, sizeof *b.sizes),
                    calloc((size_t)n + 1, sizeof *b.zrc)};
  int i, rc = 0;
  if (!b.blobs || !b.sizes || !b.zrc) {
    rc = store_fail(s, "out of memory compressing %d golden payloads", n);
    goto cleanup;
  }
  if (threads < 1 || n < 2) threads = 1;
  if (threads > n) threads = n;
  if (threads == 1 || parallel_for(n, threads, golden_deflate_one, &b, NULL) != 0)
    for (i = 0; i < n; i++) golden_deflate_one(&b, i, 0);
  for (i = 0; i < n; i++)
    if (b.zrc[i]) {
      rc = store_fail(s, "golden %s step %d %s: zlib compression of %zu bytes failed (%d)", items[i].case_id,
                      items[i].step, items[i].stage, items[i].n, b.zrc[i]);
      goto cleanup;
    }
  rc = store_tx_begin(s);
  for (i = 0; !rc && i < n; i++) rc = golden_write_one(s, &items[i], b.blobs[i], b.sizes[i]);
  if (!rc) rc = store_tx_commit(s);
  if (rc > 0) store_fail_sqlite(s, rc, "cannot store golden payload");
  if (rc) store_tx_rollback(s);
cleanup:
  for (i = 0; b.blobs && i < n; i++) free(b.blobs[i]);
  free(b.blobs);
  free(b.sizes);
  free(b.zrc);
  return rc;
}

int store_golden_put(store *s, const char *case_id, int step, const char *stage,
                     const char *tensor, const char *source, int oracle_version,
                     const char *dtype, const char *shape, const void *data, size_t n,
                     const char *digest, long long run_id) {
  const store_golden_item it = {case_id, step, stage, tensor, source, oracle_version, dtype, shape, data, n,
                                digest, run_id};
  return store_golden_put_many(s, &it, 1, 1);
}

/* Decompresses into exactly raw_bytes bytes; anything else is corruption. */
int store_golden_get(store *s, const char *case_id, int step, const char *stage,
                     const char *tensor, const char *source, int oracle_version, void **data,
                     size_t *n) {
  static const char zSql[] =
    "SELECT raw_bytes, payload FROM golden_payloads WHERE " STORE_GOLDEN_KEY;
  const store_golden_key k = {case_id, step, stage, tensor, source, oracle_version};
  sqlite3_stmt *st = NULL;
  unsigned char *zOut = NULL;
  sqlite3_int64 nRaw = 0;
  uLongf nOut = 0;
  int bAbsent = 0, zrc;
  int rc = store_golden_prepare(s, zSql, &k, NULL, &st);
  *data = NULL;
  *n = 0;
  if (!rc) rc = sqlite3_step(st);
  if (rc == SQLITE_DONE) bAbsent = 1;
  if (rc == SQLITE_DONE || rc != SQLITE_ROW) goto cleanup;
  rc = SQLITE_OK;
  nRaw = sqlite3_column_int64(st, 0);
  if (nRaw < 0 || (sqlite3_uint64)nRaw != (uLong)nRaw || (sqlite3_uint64)nRaw > SIZE_MAX) {
    rc = store_fail(s, "golden %s step %d %s/%s: bad raw_bytes %lld", case_id, step, stage,
                    tensor, (long long)nRaw);
    goto cleanup;
  }
  zOut = malloc(nRaw ? (size_t)nRaw : 1);
  if (!zOut) {
    rc = store_fail(s, "out of memory reading a golden payload of %lld bytes", (long long)nRaw);
    goto cleanup;
  }
  nOut = (uLongf)nRaw;
  zrc = uncompress(zOut, &nOut, sqlite3_column_blob(st, 1), (uLong)sqlite3_column_bytes(st, 1));
  if (zrc != Z_OK || nOut != (uLongf)nRaw) {
    rc = store_fail(s, "golden %s step %d %s/%s: payload does not decompress to %lld bytes "
                    "(zlib %d)", case_id, step, stage, tensor, (long long)nRaw, zrc);
    goto cleanup;
  }
  *data = zOut;
  *n = (size_t)nRaw;
  zOut = NULL;
cleanup:
  if (bAbsent) rc = SQLITE_OK;
  if (rc > 0) store_fail_sqlite(s, rc, "cannot read golden payload");
  sqlite3_finalize(st);
  free(zOut);
  return rc ? -1 : bAbsent;
}

/* Copies column i of st as text into out ("" for NULL). */
static void store_golden_column(sqlite3_stmt *st, int i, char *out, size_t len) {
  const unsigned char *z = sqlite3_column_text(st, i);
  snprintf(out, len, "%s", z ? (const char *)z : "");
}

int store_golden_describe(store *s, const char *case_id, int step, const char *stage,
                          const char *tensor, const char *source, int oracle_version, char *dtype,
                          size_t dtype_len, char *shape, size_t shape_len, char *digest,
                          size_t digest_len) {
  static const char zSql[] =
    "SELECT dtype, shape, digest FROM golden_payloads WHERE " STORE_GOLDEN_KEY;
  const store_golden_key k = {case_id, step, stage, tensor, source, oracle_version};
  sqlite3_stmt *st = NULL;
  int rc = store_golden_prepare(s, zSql, &k, NULL, &st), bAbsent = 0;
  if (!rc) rc = sqlite3_step(st);
  if (rc == SQLITE_DONE) {
    bAbsent = 1;
    rc = SQLITE_OK;
  } else if (rc == SQLITE_ROW) {
    store_golden_column(st, 0, dtype, dtype_len);
    store_golden_column(st, 1, shape, shape_len);
    store_golden_column(st, 2, digest, digest_len);
    rc = SQLITE_OK;
  }
  if (rc > 0) store_fail_sqlite(s, rc, "cannot read golden payload");
  sqlite3_finalize(st);
  return rc ? -1 : bAbsent;
}
