/*
** report_pool.c: the arena that owns a report model (report_build.h).
**
** Blocks of REPORT_POOL_BLOCK bytes, chained; a request larger than a block
** gets a block of its own.  Alignment is that of max_align_t, so any struct
** can live here.
*/
#include "reports/report_build.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPORT_POOL_BLOCK 65536

typedef struct pool_block {
  struct pool_block *next;
  size_t used, size;
  alignas(max_align_t) unsigned char data[];
} pool_block;

struct report_pool {
  pool_block *head;
};

static void *pool_oom(size_t n) {
  fprintf(stderr, "%s:%d: out of memory (%zu bytes) building a report\n", __FILE__, __LINE__, n);
  abort();
}

report_pool *report_pool_new(void) {
  report_pool *p = calloc(1, sizeof *p);
  return p ? p : pool_oom(sizeof *p);
}

void report_pool_free(report_pool *p) {
  pool_block *b, *next;
  if (!p) return;
  for (b = p->head; b; b = next) {
    next = b->next;
    free(b);
  }
  free(p);
}

void *report_pool_alloc(report_pool *p, size_t n) {
  const size_t align = alignof(max_align_t);
  pool_block *b = p->head;
  void *mem;
  n = (n + align - 1) / align * align;
  if (n == 0) n = align;
  if (!b || b->size - b->used < n) { /* current block full? */
    size_t size = n > REPORT_POOL_BLOCK ? n : REPORT_POOL_BLOCK;
    b = malloc(sizeof *b + size);
    if (!b) return pool_oom(n);
    b->size = size, b->used = 0;
    b->next = p->head;
    p->head = b;
  }
  mem = b->data + b->used;
  b->used += n;
  memset(mem, 0, n);
  return mem;
}

const char *report_pool_strdup(report_pool *p, const char *s) {
  size_t n;
  char *copy;
  if (!s || !*s) return "";
  n = strlen(s);
  copy = report_pool_alloc(p, n + 1);
  memcpy(copy, s, n + 1);
  return copy;
}
