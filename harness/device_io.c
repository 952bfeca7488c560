/*
** device_io.c: see device_io.h.
*/
#include "harness/device_io.h"

#include <stdio.h>
#include <string.h>


int device_io_open(device_io *io, device_runtime *rt, const tensor *in, int n_in, const tensor *out,
                      int n_out, char *err, size_t err_len) {
  int i;
  memset(io, 0, sizeof *io);
  io->rt = rt;
  io->n_in = n_in;
  io->n_out = n_out;
  for (i = 0; i < n_in; i++) {
    io->in_p[i] = NULL;
    if (in[i].dt == DTYPE_NONE) continue;
    io->in_t[i].meta = in[i];
    io->in_t[i].meta.data = NULL;
    io->in_p[i] = &io->in_t[i];
    if (in[i].rank < 0 || tensor_numel(&in[i]) < 0 || (!in[i].data && tensor_numel(&in[i]) > 0))
      continue; /* metadata only: a contract case's impossible tensor */
    if (device_buffer_alloc(rt, tensor_bytes(&in[i]), &io->in_buf[i]) != 0 ||
        device_buffer_upload(rt, &io->in_buf[i], in[i].data, tensor_bytes(&in[i])) != 0)
      goto fail;
    io->in_t[i].dptr = io->in_buf[i].dptr;
  }
  for (i = 0; i < n_out; i++) {
    io->out_t[i].meta = out[i];
    io->out_t[i].meta.data = NULL;
    io->out_p[i] = &io->out_t[i];
    if (tensor_numel(&out[i]) < 0 || out[i].rank < 0) continue;
    if (device_buffer_alloc(rt, tensor_bytes(&out[i]), &io->out_buf[i]) != 0) goto fail;
    io->out_t[i].dptr = io->out_buf[i].dptr;
  }
  if (device_io_junk_outputs(io) == 0) return 0;
fail:
  snprintf(err, err_len, "device buffers: %s", device_runtime_error(rt));
  device_io_close(io);
  return -1;
}

void device_io_close(device_io *io) {
  int i;
  for (i = 0; i < DEVICE_IO_MAX_INPUTS; i++) device_buffer_free(&io->in_buf[i]);
  for (i = 0; i < DEVICE_IO_MAX_OUTPUTS; i++) device_buffer_free(&io->out_buf[i]);
  memset(io, 0, sizeof *io);
}

int device_io_upload(device_io *io, int input, const tensor *t) {
  if (!io->in_p[input] || !io->in_buf[input].base) return 0;
  return device_buffer_upload(io->rt, &io->in_buf[input], t->data, tensor_bytes(t));
}

int device_io_junk_outputs(device_io *io) {
  int i;
  for (i = 0; i < io->n_out; i++)
    if (io->out_buf[i].base && device_buffer_fill(io->rt, &io->out_buf[i], DEVICE_JUNK_BYTE) != 0) return -1;
  return 0;
}

int device_io_download(device_io *io, int o, tensor *t) {
  *t = io->out_t[o].meta;
  t->data = NULL;
  if (tensor_alloc(t) != 0) return -1;
  if (tensor_numel(t) == 0) return 0; /* an empty output (e.g. a cache of capacity 0) */
  if (!io->out_buf[o].base) return -1;
  return device_buffer_download(io->rt, &io->out_buf[o], t->data, tensor_bytes(t));
}

int device_io_upload_output(device_io *io, int o, const tensor *t) {
  if (tensor_numel(t) == 0) return 0;
  if (!io->out_buf[o].base || tensor_bytes(t) != tensor_bytes(&io->out_t[o].meta)) return -1;
  return device_buffer_upload(io->rt, &io->out_buf[o], t->data, tensor_bytes(t));
}

static int check_one(device_io *io, const device_buffer *b, const char *what, char *report, size_t len) {
  unsigned damage = 0;
  long first[2] = {-1, -1};
  if (!b->base) return 0;
  if (device_buffer_check(io->rt, b, &damage, first) != 0) return -1;
  if (!damage) return 0;
  snprintf(report, len, "guard: %s canary overwritten (%s%s%s)", what, damage & DEVICE_GUARD_BEFORE ? "before" : "",
           damage == (DEVICE_GUARD_BEFORE | DEVICE_GUARD_AFTER) ? " and " : "", damage & DEVICE_GUARD_AFTER ? "after" : "");
  return 1;
}

int device_io_check(device_io *io, char *report, size_t len) {
  char name[32];
  int i, rc;
  for (i = 0; i < io->n_in; i++) {
    snprintf(name, sizeof name, "input %d", i);
    if ((rc = check_one(io, &io->in_buf[i], name, report, len)) != 0) return rc;
  }
  for (i = 0; i < io->n_out; i++) {
    snprintf(name, sizeof name, "output %d", i);
    if ((rc = check_one(io, &io->out_buf[i], name, report, len)) != 0) return rc;
  }
  return 0;
}

static int same_meta(const tensor *a, const tensor *b) {
  int i;
  if (a->dt != b->dt || a->rank != b->rank) return 0;
  for (i = 0; i < a->rank; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

int device_io_fits(const device_io *io, const tensor *in, int n_in, const tensor *out, int n_out) {
  int i;
  if (n_in != io->n_in || n_out != io->n_out) return 0;
  for (i = 0; i < n_in; i++) {
    if ((in[i].dt == DTYPE_NONE) != (io->in_p[i] == NULL)) return 0;
    if (io->in_p[i] && !same_meta(&in[i], &io->in_t[i].meta)) return 0;
  }
  for (i = 0; i < n_out; i++)
    if (!same_meta(&out[i], &io->out_t[i].meta)) return 0;
  return 1;
}
