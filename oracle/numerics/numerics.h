/*
** numerics.h: the frozen numerics, one include for the oracle and the kernels.
**
** DESIGN.md "The frozen numerics" and "Quantization" are the specification.
** Every function here is written out in plain IEEE operations; nothing calls
** libm or the CUDA math library, so gcc (with -ffp-contract=off) and NVRTC
** (with --fmad=false --ftz=false --prec-div=true) produce the same bits.
*/
#ifndef NX_NUMERICS_H
#define NX_NUMERICS_H

#include "nx_base.h"
#include "nx_order.h"
#include "nx_half.h"
#include "nx_ue8m0.h"
#include "nx_e4m3.h"
#include "nx_e2m1.h"
#include "nx_dd.h"
#include "nx_exp.h"
#include "nx_trig.h"
#include "nx_pow.h"

#endif /* NX_NUMERICS_H */
