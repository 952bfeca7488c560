/*
** device_io.h: one case's tensors on the device: guarded input and output
** buffers (canaries either side, outputs junk-filled before every launch),
** uploads of fresh inputs into the same buffers for replays, and downloads
** of the outputs.  Shared by every operator's lanes.
*/
#ifndef DEVICE_IO_H
#define DEVICE_IO_H

#include "device/index_share_device.h" /* device_tensor */
#include "device/runtime.h"

#define DEVICE_IO_MAX_INPUTS 20
#define DEVICE_IO_MAX_OUTPUTS 6 /* CSA ratio 4: five outputs and the optional selected_indices */

typedef struct device_io {
  device_runtime *rt;
  int n_in, n_out;
  device_buffer in_buf[DEVICE_IO_MAX_INPUTS], out_buf[DEVICE_IO_MAX_OUTPUTS];
  device_tensor in_t[DEVICE_IO_MAX_INPUTS], out_t[DEVICE_IO_MAX_OUTPUTS];
  const device_tensor *in_p[DEVICE_IO_MAX_INPUTS];
  device_tensor *out_p[DEVICE_IO_MAX_OUTPUTS];
} device_io;

/* Allocates buffers shaped like the host tensors and uploads the inputs
** (absent inputs, dt == DTYPE_NONE, get a NULL pointer). */
int device_io_open(device_io *io, device_runtime *rt, const tensor *in, int n_in, const tensor *out,
                      int n_out, char *err, size_t err_len);
void device_io_close(device_io *io);

/* Uploads one input (same shape as at open); junk-fills every output. */
int device_io_upload(device_io *io, int input, const tensor *t);
int device_io_junk_outputs(device_io *io);

/* Downloads output o into host tensor t (allocated here, shaped like it). */
int device_io_download(device_io *io, int o, tensor *t);

/* Overwrites output o with host tensor t (same bytes), e.g. an oracle payload for stage localisation. */
int device_io_upload_output(device_io *io, int o, const tensor *t);

/* 1 when the host tensors have the dtypes and shapes the buffers were made for. */
int device_io_fits(const device_io *io, const tensor *in, int n_in, const tensor *out, int n_out);

/* Checks every buffer's canaries; 0 intact, 1 damaged (report says where), -1 error. */
int device_io_check(device_io *io, char *report, size_t len);

#endif
