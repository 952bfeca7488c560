/*
** kernel_sources.h: the kernel sources and numerics headers NVRTC compiles.
**
** They are embedded into the binary at build time (cmake/EmbedFiles.cmake),
** so NVRTC compiles exactly the text the binary was built from, unless the
** environment names other text:
**   BITGATE_KERNEL_TREE=DIR  every file is read from DIR, another checkout
**                            of this layout (device/kernel_tree.h says what
**                            DIR may change);
**   BITGATE_PLANT=FILE:OLD=>NEW  the first OLD in FILE becomes NEW (after
**                            the tree, when both are set).
** Read sources through kernel_source_total/at/find, never the tables.
*/
#ifndef DEVICE_KERNEL_SOURCES_H
#define DEVICE_KERNEL_SOURCES_H

#include <stddef.h>
#include <stdio.h>

struct kernel_source {
  const char *name; /* file name, as the #include names it: "nx_exp.h" */
  const char *path; /* path in the source tree: "oracle/numerics/nx_exp.h" */
  const char *text; /* NUL-terminated contents */
  size_t size;      /* bytes, without the NUL */
};

/* Generated: the embedded files (build/gen/kernel_sources.c), in path order. */
extern const struct kernel_source kernel_sources_embedded[];
extern const int kernel_sources_embedded_count;

/* Generated: the device/kernels headers that host code includes (build/gen/kernel_host_includes.c). */
extern const char *const kernel_host_includes[];
extern const int kernel_host_include_count;

/* The files NVRTC sees: the embedded ones, or the tree's, with any plant applied. */
int kernel_source_total(void);
const struct kernel_source *kernel_source_at(int i);

/* The file of that name among them, or NULL. */
const struct kernel_source *kernel_source_find(const char *name);

/* Why BITGATE_PLANT cannot be applied (malformed, unknown file, OLD absent), or NULL. */
const char *kernel_plant_error(void);

/* "planted bug in FILE: 'OLD' => 'NEW'" while one is applied, else NULL. */
const char *kernel_plant_description(void);

/* Why BITGATE_KERNEL_TREE cannot be used (device/kernel_tree.h), or NULL. */
const char *kernel_tree_error(void);

/*
** While a kernel tree is in use: "kernel tree DIR: N files, changed: a.cu,
** b.h; added: c.h" (or "same as the embedded files"); else NULL.
*/
const char *kernel_tree_description(void);

/* Writes "INDENTkernels: WHAT" for the tree and for the plant in use, if any, so that a log says what ran. */
void kernel_sources_print_origin(FILE *out, const char *indent);

#endif
