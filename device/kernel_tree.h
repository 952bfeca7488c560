/*
** kernel_tree.h: kernel sources read from another source tree
** (BITGATE_KERNEL_TREE=DIR), so that one binary can compile and time the
** kernels of a checkout, a worktree or a branch, where that checkout cannot
** be built (a GPU host without headers) or to put two kernel versions side
** by side in one session.
**
** What the tree may change.  The host code was compiled with some of these
** files: every numerics header (the oracle shares them) and the kernel
** headers host code includes (the launch ABIs, the RoPE table, the sweep's
** functions), with whatever those include in turn.  A tree whose copy of any
** of them differs is refused, naming the file: the launchers would pass one
** layout and the kernels read another.  Kernel files (*.cu) and the other
** kernel headers may differ, and the tree may add headers of its own in
** device/kernels/ (*.cu and *.h) or oracle/numerics/ (*.h); hidden files
** (an editor's lock or swap file) are not sources.  Every embedded
** file must be in the tree.
*/
#ifndef DEVICE_KERNEL_TREE_H
#define DEVICE_KERNEL_TREE_H

#include "device/kernel_sources.h"

#include <stddef.h>

typedef struct kernel_tree {
  struct kernel_source *files; /* the embedded files' paths in their order, then the added ones by path */
  int n, n_embedded;           /* texts are the tree's own; an added file's name and path too */
} kernel_tree;

/*
** Reads the tree at dir against the embedded files (the first host_count of
** host_names are the kernel headers host code includes by name): 0, or -1
** with err naming the file and why.  On success free it with
** kernel_tree_free.
*/
int kernel_tree_load(kernel_tree *t, const char *dir, const struct kernel_source *embedded, int n_embedded,
                     const char *const *host_names, int host_count, char *err, size_t err_len);

void kernel_tree_free(kernel_tree *t);

/*
** Writes "N files, changed: a.cu, b.h; added: c.h" (or "N files, same as the
** embedded files") into buf, comparing the tree with embedded.
*/
void kernel_tree_describe(const kernel_tree *t, const struct kernel_source *embedded, char *buf, size_t len);

#endif
