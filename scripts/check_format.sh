#!/usr/bin/env bash
# scripts/check_format.sh [--fix]: every C++ and CUDA source git tracks, held to
# .clang-format (Debian's clang-format). Without --fix it changes nothing and lists the
# files that differ; with --fix it formats them in place. Run by ctest as `format`.
set -euo pipefail
cd "$(dirname "$0")/.."
fmt="${CLANG_FORMAT:-clang-format}"
if ! command -v "$fmt" >/dev/null 2>&1; then
  echo "check_format: no $fmt on PATH; install Debian's clang-format (./kforge-test does)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' '*.hpp')
if [ "${1:-}" = "--fix" ]; then
  "$fmt" -i "${files[@]}"
  exit 0
fi
# One clang-format for every file (not one per file): its diagnostics name each file that
# differs as "FILE:LINE:COL: error: ...".
if ! report="$("$fmt" --dry-run -Werror "${files[@]}" 2>&1)"; then
  mapfile -t bad < <(grep -oE '^[^:]+:[0-9]+:[0-9]+: error' <<<"$report" | cut -d: -f1 | sort -u)
  [ "${#bad[@]}" -gt 0 ] || { echo "$report" >&2; bad=("(see clang-format's output above)"); }
  printf '%s\n' "${bad[@]}" >&2
  echo "check_format: ${#bad[@]} file(s) above differ from .clang-format; run scripts/check_format.sh --fix" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files follow .clang-format"
