# ci/device_mps.sh: sourced by the device scripts (device_verify.sh,
# device_ab.sh): the CUDA Multi-Process Service, so that the kernels of
# several worker processes (`run --jobs N`) run on the GPU at once.
#
#   mps_start SUMMARY_FILE   starts the daemon; says in SUMMARY_FILE whether it did
#   mps_stop                 stops it
mps_start() {
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/bitgate-mps CUDA_MPS_LOG_DIRECTORY=/tmp/bitgate-mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if nvidia-cuda-mps-control -d; then echo "mps: started" | tee -a "$1"
  else echo "mps: could not start; workers take turns" | tee -a "$1"; fi
}
mps_stop() { echo quit | nvidia-cuda-mps-control 2>/dev/null; }
