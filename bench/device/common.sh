# Sourced by the device scripts: the toolchain on the device machine and a build of this tree
# in build-device/ (kept while the machine stays warm). Writes the build log to $OUT/build.log.
export PATH=/opt/torch/.venv/bin:/usr/local/cuda/bin:$PATH
export PYTHONUNBUFFERED=1
UB=build-device/upgradebench
ub_build() {
  cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DUB_BUILD_TESTS=ON \
        -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1 &&
  cmake --build build-device >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; return 1; }
}
# Runs the GPU-labelled tests (optionally only those matching $2) into $1/gpu_tests.log.
ub_gpu_tests() {
  ctest --test-dir build-device -L gpu ${2:+-R "$2"} --output-on-failure > "$1/gpu_tests.log" 2>&1
  echo "gpu tests rc=$?"; grep -E "tests passed|\*\*\*Failed" "$1/gpu_tests.log"
}
# The directory of torch's cuDNN 9.19 (the device's system cuDNN is 9.14).
ub_cudnn919() { python3 -c "import nvidia.cudnn,os;print(os.path.join(list(nvidia.cudnn.__path__)[0],'lib'))"; }
