/*
** kernel_tree.c: see kernel_tree.h.
*/
#include "device/kernel_tree.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TREE_FILE_MAX (8 << 20) /* no kernel source comes near it; a larger file is not one */
#define TREE_ADDED_MAX 256

/* The directories a tree's files come from, and the endings taken there (kernel_tree.h). */
static const struct {
  const char *dir;
  const char *endings[2];
} tree_dirs[] = {{"device/kernels", {".cu", ".h"}}, {"oracle/numerics", {".h", NULL}}};

static int fail(char *err, size_t err_len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, err_len, fmt, ap);
  va_end(ap);
  return -1;
}

/* dir/rel read whole and NUL-terminated into *text: 0, or -1 with why (errno's text or a size). */
static int read_whole(const char *dir, const char *rel, char **text, size_t *size, char *why, size_t why_len) {
  char path[4096];
  FILE *f;
  long n;
  *text = NULL;
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  if (!(f = fopen(path, "rb"))) return snprintf(why, why_len, "%s", strerror(errno)), -1;
  if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    snprintf(why, why_len, "%s", strerror(errno));
    return fclose(f), -1;
  }
  if (n > TREE_FILE_MAX) {
    snprintf(why, why_len, "%ld bytes, more than any kernel source (%d)", n, TREE_FILE_MAX);
    return fclose(f), -1;
  }
  if (!(*text = malloc((size_t)n + 1)) || fread(*text, 1, (size_t)n, f) != (size_t)n) {
    snprintf(why, why_len, "%s", *text ? "short read" : "out of memory");
    free(*text), *text = NULL;
    return fclose(f), -1;
  }
  fclose(f);
  (*text)[n] = '\0';
  *size = (size_t)n;
  return 0;
}

static int find_name(const struct kernel_source *files, int n, const char *name) {
  int i;
  for (i = 0; i < n; i++)
    if (!strcmp(files[i].name, name)) return i;
  return -1;
}

/*
** host[i] = 1 for each embedded file the host code compiled: the numerics
** headers, the kernel headers it includes by name, and, to a fixed point,
** every embedded file those include ("NAME", as NVRTC resolves it).
*/
static void mark_host(const struct kernel_source *emb, int n, const char *const *host_names, int host_count,
                      unsigned char *host) {
  int i, k, grew = 1;
  for (i = 0; i < n; i++) host[i] = !strncmp(emb[i].path, "oracle/numerics/", 16);
  for (k = 0; k < host_count; k++)
    if ((i = find_name(emb, n, host_names[k])) >= 0) host[i] = 1;
  while (grew) {
    grew = 0;
    for (i = 0; i < n; i++) {
      const char *p;
      if (!host[i]) continue;
      for (p = strstr(emb[i].text, "#include"); p; p = strstr(p + 8, "#include")) {
        const char *open = p + 8, *close;
        char name[128];
        int j;
        while (*open == ' ' || *open == '\t') open++;
        if (*open != '"' || !(close = strchr(open + 1, '"')) || close - open - 1 >= (long)sizeof name) continue;
        snprintf(name, sizeof name, "%.*s", (int)(close - open - 1), open + 1);
        if ((j = find_name(emb, n, name)) >= 0 && !host[j]) host[j] = 1, grew = 1;
      }
    }
  }
}

static int ends_with(const char *s, const char *end) {
  size_t a = strlen(s), b = strlen(end);
  return a > b && !strcmp(s + a - b, end);
}

static int by_path(const void *a, const void *b) {
  return strcmp(((const struct kernel_source *)a)->path, ((const struct kernel_source *)b)->path);
}

/* Appends the tree's files of tree_dirs that are not embedded: 0, or -1 with err. */
static int add_new_files(kernel_tree *t, const char *dir, char *err, size_t err_len) {
  size_t d;
  int first = t->n;
  for (d = 0; d < sizeof tree_dirs / sizeof tree_dirs[0]; d++) {
    char sub[4096], why[160];
    struct dirent *e;
    DIR *h;
    snprintf(sub, sizeof sub, "%s/%s", dir, tree_dirs[d].dir);
    if (!(h = opendir(sub)))
      return fail(err, err_len, "kernel tree '%s': cannot list %s: %s", dir, tree_dirs[d].dir, strerror(errno));
    while ((e = readdir(h))) {
      struct kernel_source *f;
      char rel[512], *text;
      size_t size;
      int at;
      if (e->d_name[0] == '.' || /* hidden: an editor's lock or swap file, not a source */
          !(ends_with(e->d_name, tree_dirs[d].endings[0]) ||
            (tree_dirs[d].endings[1] && ends_with(e->d_name, tree_dirs[d].endings[1]))))
        continue;
      snprintf(rel, sizeof rel, "%s/%s", tree_dirs[d].dir, e->d_name);
      at = find_name(t->files, t->n, e->d_name);
      if (at >= 0 && !strcmp(t->files[at].path, rel)) continue; /* embedded, read already */
      if (at >= 0) {
        closedir(h);
        return fail(err, err_len, "kernel tree '%s': %s and %s share a name, and NVRTC includes by name", dir,
                    t->files[at].path, rel);
      }
      if (t->n - t->n_embedded >= TREE_ADDED_MAX) {
        closedir(h);
        return fail(err, err_len, "kernel tree '%s': more than %d files beyond the embedded ones", dir, TREE_ADDED_MAX);
      }
      if (read_whole(dir, rel, &text, &size, why, sizeof why) != 0) {
        closedir(h);
        return fail(err, err_len, "kernel tree '%s': cannot read %s: %s", dir, rel, why);
      }
      f = &t->files[t->n++];
      f->text = text, f->size = size;
      f->path = strdup(rel);
      f->name = f->path ? strrchr(f->path, '/') + 1 : NULL;
      if (!f->path) {
        closedir(h);
        return fail(err, err_len, "kernel tree '%s': out of memory", dir);
      }
    }
    closedir(h);
  }
  qsort(t->files + first, (size_t)(t->n - first), sizeof *t->files, by_path);
  return 0;
}

int kernel_tree_load(kernel_tree *t, const char *dir, const struct kernel_source *embedded, int n_embedded,
                     const char *const *host_names, int host_count, char *err, size_t err_len) {
  unsigned char *host;
  struct stat st;
  int i;
  memset(t, 0, sizeof *t);
  if (!dir || !*dir) return fail(err, err_len, "kernel tree: the directory is empty");
  if (stat(dir, &st) != 0) return fail(err, err_len, "kernel tree '%s': %s", dir, strerror(errno));
  if (!S_ISDIR(st.st_mode)) return fail(err, err_len, "kernel tree '%s': not a directory", dir);
  t->files = calloc((size_t)n_embedded + TREE_ADDED_MAX, sizeof *t->files);
  host = calloc((size_t)n_embedded + 1, 1);
  if (!t->files || !host) {
    free(host);
    kernel_tree_free(t);
    return fail(err, err_len, "kernel tree '%s': out of memory", dir);
  }
  mark_host(embedded, n_embedded, host_names, host_count, host);
  for (i = 0; i < n_embedded; i++) {
    struct kernel_source *f = &t->files[i];
    char why[160], *text;
    *f = embedded[i];
    f->text = NULL;
    t->n = t->n_embedded = i + 1;
    if (read_whole(dir, embedded[i].path, &text, &f->size, why, sizeof why) != 0) {
      fail(err, err_len, "kernel tree '%s': cannot read %s: %s (every file this binary embeds must be there)", dir,
           embedded[i].path, why);
      break;
    }
    f->text = text;
    if (host[i] && (f->size != embedded[i].size || memcmp(text, embedded[i].text, f->size))) {
      fail(err, err_len,
           "kernel tree '%s': %s differs from the copy this binary was built with, and the host code "
           "compiles it too (a launch layout or the oracle's numerics); build bitgate from that tree instead",
           dir, embedded[i].path);
      break;
    }
  }
  free(host);
  if (i < n_embedded || add_new_files(t, dir, err, err_len) != 0) {
    kernel_tree_free(t);
    return -1;
  }
  return 0;
}

void kernel_tree_free(kernel_tree *t) {
  int i;
  if (t->files)
    for (i = 0; i < t->n; i++) {
      free((char *)t->files[i].text);
      if (i >= t->n_embedded) free((char *)t->files[i].path); /* name points into it */
    }
  free(t->files);
  memset(t, 0, sizeof *t);
}

void kernel_tree_describe(const kernel_tree *t, const struct kernel_source *embedded, char *buf, size_t len) {
  size_t used;
  int i, changed = 0;
  used = (size_t)snprintf(buf, len, "%d files", t->n);
  for (i = 0; i < t->n_embedded && used < len; i++)
    if (t->files[i].size != embedded[i].size || memcmp(t->files[i].text, embedded[i].text, t->files[i].size))
      used += (size_t)snprintf(buf + used, len - used, "%s%s", changed++ ? ", " : ", changed: ", t->files[i].name);
  for (i = t->n_embedded; i < t->n && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%s%s", i > t->n_embedded ? ", " : "; added: ", t->files[i].name);
  if (!changed && t->n == t->n_embedded && used < len) snprintf(buf + used, len - used, ", same as the embedded files");
}
