#!/bin/sh
# ctest_gpu.sh TEST [ARGS]: runs a GPU test (CTest label gpu) on the GPU that
# CTest's resource allocation gave it.  The GPU tests declare
# RESOURCE_GROUPS "gpus:1" (cmake/Criterion.cmake); with
#   ctest --resource-spec-file ci/resources.example.json -j8 -L gpu
# CTest runs one per GPU at a time and tells each which one in
# CTEST_RESOURCE_GROUP_0_GPUS ("id:1,slots:1"); the test then sees that GPU
# as device 0.  Without a spec file CTest sets nothing and the test runs on
# whatever CUDA_VISIBLE_DEVICES already says (all GPUs: device 0).
if [ -n "${CTEST_RESOURCE_GROUP_0_GPUS:-}" ]; then
  id=${CTEST_RESOURCE_GROUP_0_GPUS#id:}
  CUDA_VISIBLE_DEVICES=${id%%,*}
  export CUDA_VISIBLE_DEVICES
fi
exec "$@"
