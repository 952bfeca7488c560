/*
** launch_skip.h: kernels left out of captured graphs, for `bitgate bench
** --skip-kernels` (docs/SPEED.md, nineteenth round).  A kernel developer's
** question before fusing or deleting a pass is how much the line would
** gain if the pass cost nothing; timing the stage with that kernel left out
** of the graph answers it without a throwaway build.  The runtime consults
** the list for launches made while a capture is open only (runtime.h,
** device_runtime_set_skip), so the eager run whose outputs `bench` checks
** runs every kernel and leaves every buffer the timed graph reads filled.
** Plain C; no CUDA.
*/
#ifndef DEVICE_LAUNCH_SKIP_H
#define DEVICE_LAUNCH_SKIP_H

#include <stddef.h>

#define LAUNCH_SKIP_MAX 16       /* names a list holds */
#define LAUNCH_SKIP_NAME_MAX 128 /* bytes a name may take, with its NUL */
#define LAUNCH_SKIP_SEEN_MAX 48  /* other kernel names kept, to suggest when a name matched nothing */

typedef struct launch_skip {
  int n;
  char name[LAUNCH_SKIP_MAX][LAUNCH_SKIP_NAME_MAX];
  long long left_out[LAUNCH_SKIP_MAX]; /* captured launches left out, per name */
  int n_seen;                          /* the kernels launched and not on the list, first come */
  char seen[LAUNCH_SKIP_SEEN_MAX][LAUNCH_SKIP_NAME_MAX];
} launch_skip;

/*
** Parses csv ("csa4_attn_gather,csa4_attn_softmax") into *l: 1 to
** LAUNCH_SKIP_MAX distinct names of letters, digits and '_'.  0, or -1 with
** a message in err naming what was wrong.
*/
int launch_skip_parse(launch_skip *l, const char *csv, char *err, size_t len);

/*
** Whether kernel `name` is on l; counts the hit, or keeps the name among
** l's seen ones (so that a name that never matched can be told what did).
*/
int launch_skip_hit(launch_skip *l, const char *name);

#endif /* DEVICE_LAUNCH_SKIP_H */
