#!/usr/bin/env bash
# bench/compile_time.sh [REPS] [SOURCE.cu ...]: where a candidate's nvcc time goes (issue 34).
# Runs on any machine with nvcc (no GPU needed). Every figure is CPU seconds (user + sys
# of the process and the children it waits for, from /usr/bin/time), the median of REPS
# runs (default 3), so a shared machine's load does not count; wall seconds beside them.
#
# 1. passes:   kforge's compile of each source (sandbox/build.cpp's flags) split into the
#              commands `nvcc --dryrun --keep` lists, each timed alone.
# 2. headers:  the same passes for a bare kernel + kf_run without kforge's headers, the same
#              with <kf/kf.cuh>, and the sources: what the headers cost, host and device.
# 3. variants: the whole nvcc with other flags; "SASS" says whether `cuobjdump -sass` of the
#              library equals the baseline's (same device code) and "cubin" whether the
#              kernels' ELF images are the same bytes.
# Env: NVCC (default /usr/local/cuda/bin/nvcc), CUOBJDUMP, SECTIONS ("passes headers variants"),
# VARIANTS (names, comma-separated: only those and the baseline), FLAGS (before | now).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
reps="${1:-3}"
shift || true
nvcc="${NVCC:-/usr/local/cuda/bin/nvcc}"
cuobjdump="${CUOBJDUMP:-$(dirname "$nvcc")/cuobjdump}"  # optional
sections="${SECTIONS:-passes headers variants}"
inc="$root/primitives/include"
if [ $# -gt 0 ]; then
  sources=()
  for s in "$@"; do sources+=("$(realpath "$s")"); done
else
  sources=("$root/problems/all_reduce/examples/uva.cu" "$root/problems/all_reduce/solution.cu"
    "$root/problems/gemm_reduce_scatter/solution.cu" "$root/problems/moe_dispatch/solution.cu")
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The flags of sandbox/build.cpp's compile_flags() for a candidate (sm_90a where the
# source asks for it, as wants_sm90a() decides): FLAGS=before (the default), kforge's
# before issue 34's change, the baseline of every table; FLAGS=now, kforge's since.
arch_flag() {
  if head -n1 "$1" | grep -q '// kf: sm_90a' || grep -q 'wgmma\|setmaxnreg' "$1"; then
    echo "-gencode=arch=compute_90a,code=sm_90a"
  else
    echo "-arch=sm_90"
  fi
}
kforge_flags() {  # SOURCE -> the flags, one a line
  if [ "${FLAGS:-before}" = now ]; then
    printf '%s\n' -O2 -std=c++17 "$(arch_flag "$1")" -shared -Xcompiler -fPIC \
      -cudart shared -lineinfo "-I$inc"
  else
    printf '%s\n' -O3 -std=c++17 "$(arch_flag "$1")" -shared -Xcompiler -fPIC -cudart shared \
      -lineinfo "-I$inc"
  fi
}

median() { sort -g | awk '{v[NR]=$1} END {if (NR) print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

# timed OUT CMD...: runs CMD, appends "cpu wall" to OUT; CMD's own output to OUT.log.
timed() {
  local out="$1"
  shift
  /usr/bin/time -f '%U %S %e' -o "$out.t" "$@" >>"$out.log" 2>&1 || {
    echo "failed: $* (see $out.log)" >&2
    tail -5 "$out.log" >&2
    return 1
  }
  awk '{printf "%.3f %.3f\n", $1 + $2, $3}' "$out.t" >>"$out"
}

# The name of one pass of nvcc's --dryrun listing.
pass_name() {
  local c="$1"
  case "$c" in
    gcc*-D__CUDA_ARCH__=*" -E "*) echo "gcc -E (device preprocess)" ;;
    gcc*" -E "*) echo "gcc -E (host preprocess)" ;;
    cudafe++*) echo "cudafe++ (host front end)" ;;
    *'$CICC_PATH/cicc'*) echo "cicc (device front end+NVVM)" ;;
    ptxas*) echo "ptxas (PTX to SASS)" ;;
    fatbinary*" -link "*) echo "fatbinary (dlink)" ;;
    fatbinary*) echo "fatbinary" ;;
    gcc*link.stub*) echo "gcc -c link.stub (dlink)" ;;
    gcc*" -c "*) echo "gcc -c (host code)" ;;
    nvlink*) echo "nvlink (dlink)" ;;
    g++*) echo "g++ -shared (link)" ;;
    *) echo "${c%% *}" ;;
  esac
}

# passes_of NAME SOURCE FLAGS...: times each pass of one compile REPS times; writes
# "$work/NAME.passes" (name<TAB>cpu<TAB>wall, medians) and "$work/NAME.total".
passes_of() {
  local name="$1" src="$2"
  shift 2
  local d="$work/$name"
  rm -rf "$d" && mkdir -p "$d/keep"
  "$nvcc" "$@" -o "$d/lib.so" "$src" --dryrun --keep --keep-dir "$d/keep" 2>"$d/dryrun" >/dev/null
  local env=() i=0 line
  while IFS= read -r line; do
    line="${line#\#\$ }"
    if [[ "$line" =~ ^(PATH|LD_LIBRARY_PATH|CICC_PATH|NVVMIR_LIBRARY_DIR)=(.*)$ ]]; then
      env+=("export ${BASH_REMATCH[1]}='${BASH_REMATCH[2]}'")
    elif [[ "$line" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; then
      continue
    elif [[ "$line" != rm\ * ]]; then
      i=$((i + 1))
      { printf '%s\n' "${env[@]}" "exec $line"; } >"$d/cmd$i.sh"
      pass_name "$line" >"$d/cmd$i.name"
    fi
  done <"$d/dryrun"
  local k
  for _ in $(seq "$reps"); do
    for k in $(seq "$i"); do (cd "$d" && timed "$d/cmd$k.times" bash "$d/cmd$k.sh"); done
    timed "$d/total.times" "$nvcc" "$@" -o "$d/lib.so" "$src"
  done
  : >"$work/$name.passes"
  for k in $(seq "$i"); do
    printf '%s\t%s\t%s\n' "$(cat "$d/cmd$k.name")" "$(cut -d' ' -f1 "$d/cmd$k.times" | median)" \
      "$(cut -d' ' -f2 "$d/cmd$k.times" | median)" >>"$work/$name.passes"
  done
  printf '%s\t%s\n' "$(cut -d' ' -f1 "$d/total.times" | median)" \
    "$(cut -d' ' -f2 "$d/total.times" | median)" >"$work/$name.total"
}

# table NAME...: passes as rows, one CPU column per NAME (the passes of the first NAME).
table() {
  printf '| pass |'
  printf ' %s |' "$@"
  printf '\n|---|'
  printf -- '---:|%.0s' "$@"
  printf '\n'
  local n rows
  rows="$(cut -f1 "$work/$1.passes" | awk '!seen[$0]++')"
  while IFS= read -r p; do
    printf '| %s |' "$p"
    for n in "$@"; do
      printf ' %s |' "$(awk -F'\t' -v p="$p" '$1 == p {s += $2} END {printf "%.3f", s}' \
        "$work/$n.passes")"
    done
    printf '\n'
  done <<<"$rows"
  printf '| sum of passes |'
  for n in "$@"; do printf ' %s |' "$(awk -F'\t' '{s += $2} END {printf "%.3f", s}' "$work/$n.passes")"; done
  # nvcc runs its passes one after another; the host front end (gcc -E host, cudafe++)
  # and the device chain (gcc -E device, cicc, ptxas, fatbinary) need not wait for each other.
  printf '\n| critical path, host and device chains overlapped |'
  for n in "$@"; do
    printf ' %s |' "$(awk -F'\t' '
      $1 ~ /host preprocess|cudafe/ {h += $2; next}
      $1 ~ /device preprocess|cicc|ptxas|^fatbinary$/ {d += $2; next}
      {t += $2}
      END {printf "%.3f", (h > d ? h : d) + t}' "$work/$n.passes")"
  done
  printf '\n| whole nvcc (CPU) |'
  for n in "$@"; do printf ' **%s** |' "$(cut -f1 "$work/$n.total")"; done
  printf '\n| whole nvcc (wall) |'
  for n in "$@"; do printf ' %s |' "$(cut -f2 "$work/$n.total")"; done
  printf '\n'
}

mapfile_flags() { mapfile -t flags < <(kforge_flags "$1"); }

if [[ " $sections " == *" passes "* ]]; then
  names=()
  for s in "${sources[@]}"; do
    n="$(basename "$(dirname "$s")")/$(basename "$s")"
    n="${n//\//_}"
    mapfile_flags "$s"
    passes_of "$n" "$s" "${flags[@]}"
    names+=("$n")
  done
  echo "## passes: kforge's compile, CPU s per pass (median of $reps)"
  echo
  table "${names[@]}"
  echo
fi

if [[ " $sections " == *" headers "* ]]; then
  body='__global__ void k(float* y, const float* x, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}'
  printf '%s\n%s\nextern "C" int kf_run() { k<<<1, 32>>>(nullptr, nullptr, 0); return 0; }\n' \
    '#include <cuda_runtime.h>' "$body" >"$work/bare.cu"
  printf '%s\n%s\nextern "C" int kf_run(kf::Comm& c, kf::Tensors&) {\n%s\n}\n' \
    '#include <kf/kf.cuh>' "$body" \
    '  k<<<1, 32, 0, c.stream()>>>(nullptr, nullptr, 0); return 0;' >"$work/kf_cuh.cu"
  mapfile_flags "$work/bare.cu"
  passes_of bare "$work/bare.cu" "${flags[@]}"
  passes_of kf_cuh "$work/kf_cuh.cu" "${flags[@]}"
  echo "## headers: a bare kernel, the same with <kf/kf.cuh>, CPU s per pass (median of $reps)"
  echo
  table bare kf_cuh
  echo
  # The lines each front end reads.
  for n in bare kf_cuh; do
    printf '%s: host .ii %s lines, device .ii %s lines, host .cudafe1.cpp %s lines\n' "$n" \
      "$(cat "$work/$n"/keep/*.cpp4.ii | wc -l)" "$(cat "$work/$n"/keep/*.cpp1.ii | wc -l)" \
      "$(cat "$work/$n"/keep/*.cudafe1.cpp | wc -l)"
  done
  echo
fi

# build_once DIR SOURCE FLAGS...: one whole nvcc into DIR/lib.so; "cpu wall" onto DIR/times.
build_once() {
  local d="$1" src="$2"
  shift 2
  rm -f "$d/lib.so"
  if [[ " $* " == *" SPLIT "* ]]; then  # nvcc -c, then g++ -shared: no device link step
    local f=() a
    for a in "$@"; do [[ "$a" == SPLIT || "$a" == -shared ]] || f+=("$a"); done
    timed "$d/times" bash -c '"$0" "${@:1:$#-2}" -c -o "${@: -2:1}.o" "${@: -1}" &&
      g++ -shared -o "${@: -2:1}" "${@: -2:1}.o" -L"$(dirname "$0")/../lib64" -lcudart' \
      "$nvcc" "${f[@]}" "$d/lib.so" "$src"
  else
    timed "$d/times" "$nvcc" "$@" -o "$d/lib.so" "$src"
  fi
}

# device_code DIR: DIR/sass (cuobjdump's listing where the toolkit has it, else each
# kernel's machine code, its .text section, hashed by bench/fatbin_text.py) and DIR/elf
# (the kernels' whole ELF images, hashed).
device_code() {
  local d="$1"
  if [ -x "$cuobjdump" ]; then
    "$cuobjdump" -sass "$d/lib.so" | grep -v '^[[:space:]]*$\|^Fatbin\|^=\+$\|^host\|compile_size' \
      >"$d/sass"
  else
    python3 "$root/bench/fatbin_text.py" "$d/lib.so" | grep '^text' >"$d/sass"
  fi
  python3 "$root/bench/fatbin_text.py" "$d/lib.so" | grep '^elf ' >"$d/elf"
}

# The variants: a name, then changes to the baseline's flags separated by ";": "add:A B"
# appends A and B, "drop:A" removes A, "swap:A:B" replaces A by B.
variants=(
  "baseline|"
  "host -O2|swap:-O3:-O2"
  "host -O1|swap:-O3:-O1"
  "host -O0|swap:-O3:-O0"
  "no PTX (sm_90 only)|swap:-arch=sm_90:-gencode=arch=compute_90,code=sm_90"
  "--threads 2|add:--threads 2"
  "-Xcompiler -pipe|add:-Xcompiler -pipe"
  "-ewp|add:--extensible-whole-program"
  "-rdc=true|add:-rdc=true"
  "no -lineinfo|drop:-lineinfo"
  "nvcc -c + g++ -shared|add:SPLIT"
  "-nodlink|add:-nodlink"
  "-Xcompiler -fuse-ld=gold|add:-Xcompiler -fuse-ld=gold"
  "kforge now: host -O2|swap:-O3:-O2"
)
# VARIANTS="baseline,-nodlink": only those (the baseline always runs).
if [ -n "${VARIANTS:-}" ]; then
  keep=()
  for v in "${variants[@]}"; do
    [[ ",baseline,$VARIANTS," == *",${v%%|*},"* ]] && keep+=("$v")
  done
  variants=("${keep[@]}")
fi

apply_change() {  # CHANGES BASE...: the flags, one a line
  local changes="$1" c a
  shift
  local out=("$@")
  IFS=';' read -r -a cs <<<"$changes"
  for c in "${cs[@]}"; do
    local next=()
    case "$c" in
      add:*) read -r -a next <<<"${c#add:}" && out+=("${next[@]}") && continue ;;
      drop:*) for a in "${out[@]}"; do [ "$a" = "${c#drop:}" ] || next+=("$a"); done ;;
      swap:*)
        local ft="${c#swap:}"
        for a in "${out[@]}"; do if [ "$a" = "${ft%%:*}" ]; then next+=("${ft#*:}"); else next+=("$a"); fi; done
        ;;
    esac
    out=("${next[@]}")
  done
  printf '%s\n' "${out[@]}"
}

if [[ " $sections " == *" variants "* ]]; then
  echo "## variants: the whole nvcc, CPU s (median of $reps rounds, the variants interleaved"
  echo "## in each round); Δ: the median of each round's difference to that round's baseline"
  echo
  for s in "${sources[@]}"; do
    n="$(basename "$(dirname "$s")")/$(basename "$s")"
    mapfile_flags "$s"
    for i in "${!variants[@]}"; do
      rm -rf "$work/v/$i" && mkdir -p "$work/v/$i"
      apply_change "${variants[$i]#*|}" "${flags[@]}" | grep -v '^$' >"$work/v/$i/flags" || true
    done
    for _ in $(seq "$reps"); do
      for i in "${!variants[@]}"; do
        mapfile -t f <"$work/v/$i/flags"
        build_once "$work/v/$i" "$s" "${f[@]}"
      done
    done
    echo "### $n (${flags[2]})"
    echo
    echo "| variant | CPU s | Δ CPU s | wall s | SASS | cubin |"
    echo "|---|---:|---:|---:|---|---|"
    for i in "${!variants[@]}"; do
      device_code "$work/v/$i"
      same_sass=same
      cmp -s "$work/v/0/sass" "$work/v/$i/sass" || same_sass=differs
      same_elf=same
      cmp -s "$work/v/0/elf" "$work/v/$i/elf" || same_elf=differs
      delta="$(paste -d' ' "$work/v/$i/times" "$work/v/0/times" | awk '{print $1 - $3}' | median)"
      printf '| %s | %s | %+.3f | %s | %s | %s |\n' "${variants[$i]%%|*}" \
        "$(cut -d' ' -f1 "$work/v/$i/times" | median)" "$delta" \
        "$(cut -d' ' -f2 "$work/v/$i/times" | median)" "$same_sass" "$same_elf"
    done
    echo
  done
fi
