/*
** kernel_sources.h: the kernel sources and numerics headers embedded into the
** binary at build time (cmake/EmbedFiles.cmake), so NVRTC compiles exactly the
** text the binary was built from.
*/
#ifndef DEVICE_KERNEL_SOURCES_H
#define DEVICE_KERNEL_SOURCES_H

#include <stddef.h>

struct kernel_source {
  const char *name; /* file name, as the #include names it: "nx_exp.h" */
  const char *path; /* path in the source tree: "oracle/numerics/nx_exp.h" */
  const char *text; /* NUL-terminated contents */
  size_t size;      /* bytes, without the NUL */
};

extern const struct kernel_source kernel_sources[];
extern const int kernel_source_count;

/*
** The embedded file with this name, or NULL.  Under BITGATE_PLANT it is the
** planted text (kernel_sources.c); read sources through this, not the table.
*/
const struct kernel_source *kernel_source_find(const char *name);

/* Why BITGATE_PLANT cannot be applied (malformed, unknown file, OLD absent), or NULL. */
const char *kernel_plant_error(void);

/* "planted bug in FILE: 'OLD' => 'NEW'" while one is applied, else NULL. */
const char *kernel_plant_description(void);

#endif
