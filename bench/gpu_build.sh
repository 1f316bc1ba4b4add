# bench/gpu_build.sh: sourced by the GPU-machine scripts (gpu_check.sh, multi_gpu.sh).
# Prints what the machine is, then configures and builds kforge and kforge-rank into
# $build, with logs under $out. NCCL is the CUDA toolkit's when it has one, else the one
# PyTorch's pip packages carry (the lent machines' case); NCCL_HOME names the folder it
# was found in, for building nccl-tests against the same library.
echo "== machine ($(date -u +%Y-%m-%dT%H:%MZ))"
nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
nvidia-smi topo -m 2>&1
grep -E "^(PRETTY_NAME)=" /etc/os-release; ldd --version | head -1
nvcc --version | tail -1; mpirun --version 2>&1 | head -1; cmake --version | head -1

echo "== build"
t0=$(date +%s)
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
nccl=()
NCCL_HOME=/usr/local/cuda
if ! ls /usr/local/cuda/include/nccl.h /usr/include/nccl.h >/dev/null 2>&1; then
  d=$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null || true)
  if [ -n "$d" ] && [ -e "$d/include/nccl.h" ]; then
    lib=$(ls "$d"/lib/libnccl.so* | head -1)
    nccl=(-DNCCL_INCLUDE_DIR="$d/include" -DNCCL_LIBRARY="$lib")
    NCCL_HOME="$d"
    echo "NCCL from $d ($(basename "$lib"))"
  fi
fi
export NCCL_HOME
if ! cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release "${nccl[@]}" >"$out/cmake.log" 2>&1; then
  tail -40 "$out/cmake.log"; return 1
fi
if ! cmake --build "$build" -j "$(nproc)" --target kforge kforge-rank >"$out/build.log" 2>&1; then
  grep -B2 -A6 -E "error|Error" "$out/build.log" | head -80; return 1
fi
echo "built in $(( $(date +%s) - t0 )) s"
