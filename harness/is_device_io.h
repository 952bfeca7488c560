/*
** is_device_io.h: an IndexShare case's tensors on the device: guarded input
** and output buffers (canaries either side, outputs junk-filled before every
** launch), uploads of fresh inputs into the same buffers for replays, and
** downloads of the outputs.
*/
#ifndef IS_DEVICE_IO_H
#define IS_DEVICE_IO_H

#include "cases/index_share_cases.h"
#include "device/index_share_device.h"
#include "device/runtime.h"

typedef struct is_device_io {
  device_runtime *rt;
  int n_in, n_out;
  device_buffer in_buf[IS_CASE_MAX_INPUTS], out_buf[IS_OUTPUT_COUNT];
  device_tensor in_t[IS_CASE_MAX_INPUTS], out_t[IS_OUTPUT_COUNT];
  const device_tensor *in_p[IS_CASE_MAX_INPUTS];
  device_tensor *out_p[IS_OUTPUT_COUNT];
} is_device_io;

/* Allocates buffers shaped like the host tensors and uploads the inputs. */
int is_device_io_open(is_device_io *io, device_runtime *rt, const tensor *in, int n_in, const tensor *out,
                      int n_out, char *err, size_t err_len);
void is_device_io_close(is_device_io *io);

/* Uploads one input (same shape as at open); junk-fills every output. */
int is_device_io_upload(is_device_io *io, int input, const tensor *t);
int is_device_io_junk_outputs(is_device_io *io);

/* Downloads output o into host tensor t (allocated here, shaped like it). */
int is_device_io_download(is_device_io *io, int o, tensor *t);

/* Checks every buffer's canaries; 0 intact, 1 damaged (report says where), -1 error. */
int is_device_io_check(is_device_io *io, char *report, size_t len);

#endif
