# ci/device_env.sh: sourced on the GPU host, in the copy of the checkout, to
# unpack .dev/bundle.tar.gz (ci/device_bundle.sh) and make its paths hold:
# the checkout is linked at the path the build was made in, build/ comes
# from the bundle, and the bundle's libraries go first on LD_LIBRARY_PATH.
# Idempotent: a later call on the same machine unpacks only a newer bundle
# (or again when the carried .dev/ came without the unpacked ROOT).
bitgate_here=$(pwd -P)
if [ ! -f build/.bundle-stamp ] || [ ! -f .dev/ROOT ] || [ .dev/bundle.tar.gz -nt build/.bundle-stamp ]; then
  rm -rf build .dev/lib
  tar -C .dev -xzf .dev/bundle.tar.gz ROOT lib
  tar -xzf .dev/bundle.tar.gz build
  touch build/.bundle-stamp
fi
bitgate_root=$(cat .dev/ROOT)
if [ "$bitgate_root" != "$bitgate_here" ]; then
  mkdir -p "$(dirname "$bitgate_root")"
  ln -sfn "$bitgate_here" "$bitgate_root"
fi
export LD_LIBRARY_PATH="$bitgate_here/.dev/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cd "$bitgate_root"
