# Sourced by the bench scripts: the toolchain and a build of a source tree. Works on any Linux
# machine with CUDA (nvcc on the PATH or in /usr/local/cuda) and, for the peer scripts, a python3
# with PyTorch (PYTHON to choose another interpreter).
#   ub_build SRC BUILD [cmake args...]   configure and build SRC into BUILD (log: BUILD/build.log);
#                                          UB_TARGETS builds only those targets (e.g. "gpu_tests
#                                          upgradebench"); UB_CMAKE_ARGS adds more (a machine without the SQLite and
#                                          libpq headers: -DSQLite3_INCLUDE_DIR=... -DSQLite3_LIBRARY=...
#                                          -DPostgreSQL_INCLUDE_DIR=... -DPostgreSQL_LIBRARY=..., from
#                                          Debian's .deb files unpacked with dpkg -x)
#   ub_cudnn_dir, ub_nccl_dir             the directory of PyTorch's cuDNN / NCCL, to run against it
#   ub_log DIR NAME                        a file under DIR for NAME's output
set -o pipefail
export PATH="$PATH:/usr/local/cuda/bin"
export PYTHONUNBUFFERED=1
PYTHON=${PYTHON:-python3}
# NVLink multicast stays off (NCCL, PyTorch): it can take shared GPUs out of service.
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0} TORCH_SYMM_MEM_DISABLE_MULTICAST=${TORCH_SYMM_MEM_DISABLE_MULTICAST:-1}

ub_build() {
  local src=$1 build=$2
  shift 2
  mkdir -p "$build"
  local gen=()
  command -v ninja > /dev/null && gen=(-G Ninja)
  # shellcheck disable=SC2086
  if ! { cmake -S "$src" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release "$@" ${UB_CMAKE_ARGS:-} &&
         cmake --build "$build" -j "$(nproc)" ${UB_TARGETS:+--target $UB_TARGETS}; } > "$build/build.log" 2>&1; then
    tail -40 "$build/build.log"
    echo "build of $src failed (log: $build/build.log)" >&2
    return 1
  fi
}

# The directory of PyTorch's NCCL, to run ours against the same NCCL as the peer.
ub_nccl_dir() {
  "$PYTHON" -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))" 2> /dev/null
}

ub_cudnn_dir() {
  "$PYTHON" -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2> /dev/null
}

ub_arch() {
  nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2> /dev/null | head -1 | tr -d .
}

# Debian .deb files carried to a machine that lacks their headers (libsqlite3-dev and libpq-dev on
# the GPU machine, which has SQLite's runtime library): each unpacked into PREFIX with dpkg -x
# (never into /), and UB_CMAKE_ARGS pointed at the headers, the machine's own libsqlite3.so.0 and
# libpq's archive (libpq is opened at run time; the build only needs a file to name).
#   ub_unpack_debs DEB_DIR PREFIX
ub_unpack_debs() {
  local debs=$1 prefix=$2 lib
  mkdir -p "$prefix"
  for f in "$debs"/*.deb; do dpkg -x "$f" "$prefix" || return 1; done
  lib=$prefix/usr/lib/x86_64-linux-gnu
  export UB_CMAKE_ARGS="${UB_CMAKE_ARGS:-} -DSQLite3_INCLUDE_DIR=$prefix/usr/include -DSQLite3_LIBRARY=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0 \
-DPostgreSQL_INCLUDE_DIR=$prefix/usr/include/postgresql -DPostgreSQL_LIBRARY=$lib/libpq.a"
}
