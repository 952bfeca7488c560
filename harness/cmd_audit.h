/*
** cmd_audit.h: `bitgate audit`, the PTX audit of every embedded kernel under
** the pinned NVRTC options (device/ptx_audit.h).  Needs NVRTC, not a GPU.
*/
#ifndef CMD_AUDIT_H
#define CMD_AUDIT_H

/*
** argv[0] is "audit".  Returns 0 when every kernel is clean, 1 on any finding
** (or a kernel that does not compile), 2 on a usage error, 3 when this build
** has no NVRTC (exit_codes.h).
*/
int cmd_audit(int argc, char **argv);

#endif
