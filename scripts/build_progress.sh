# scripts/build_progress.sh: sourced by setup.sh. Runs `cmake --build` with its output in a
# log and, on stderr, one line of progress: on a terminal updated in place ("kforge setup:
# building kforge 57/180 (src/cli/live.cpp) 1m12s"), elsewhere (CI, a pipe) a plain line
# every 10%.
# A build with nothing to do prints nothing.

# A step's line: Ninja's (as NINJA_STATUS below makes it) or Make's.
kf_status_line='^\[([0-9]+/[0-9]+|[ 0-9]+%)\] '

# kf_step_name DESCRIPTION: what a Ninja or Make step works on, short: the source a compile
# step builds ("CMakeFiles/kforge_cli.dir/src/cli/live.cpp.o" -> "src/cli/live.cpp"), or
# "linking kforge_tests".
kf_step_name() {
  local d="$1"
  case "$d" in
    Linking*) d="linking ${d##* }" ;;
    Building*object*) d="${d##* }"; d="${d#*.dir/}"; d="${d%.o}" ;;
  esac
  d="${d##*cmake_pch.hxx*}"
  printf '%s' "${d:-precompiling headers}"
}

# kf_build WHAT LOG BUILD_DIR CMAKE_BUILD_ARGS...: builds, showing progress; the build's whole
# output goes to LOG. Returns the build's status.
kf_build() {
  local what="$1" log="$2" dir="$3"
  shift 3
  local tty=0 cols=80 start=$SECONDS shown=0 next=10 step total pct name msg line
  [ -t 2 ] && tty=1 && cols="$(tput cols 2>/dev/null || echo 80)"
  : >"$log"
  # NINJA_STATUS: ninja's prefix of each step's line; Make prints "[ 57%] " by itself.
  NINJA_STATUS="[%f/%t] " cmake --build "$dir" "$@" 2>&1 | {
    while IFS= read -r line; do
      printf '%s\n' "$line" >>"$log"
      if [[ "$line" =~ ^\[([0-9]+)/([0-9]+)\]\ (.*)$ ]]; then
        step="${BASH_REMATCH[1]}" total="${BASH_REMATCH[2]}"
        pct=$((100 * step / total))
        msg="$step/$total"
      elif [[ "$line" =~ ^\[\ *([0-9]+)%\]\ (.*)$ ]]; then
        pct="${BASH_REMATCH[1]}"
        msg="$pct%"
      else
        continue
      fi
      name="$(kf_step_name "${BASH_REMATCH[-1]}")"
      msg="kforge setup: building $what $msg ($name) $(((SECONDS - start) / 60))m$(((SECONDS - start) % 60))s"
      shown=1
      if [ "$tty" = 1 ]; then
        printf '\r\033[K%s' "${msg:0:$((cols - 1))}" >&2
      elif [ "$pct" -ge "$next" ]; then
        printf '%s\n' "$msg" >&2
        next=$(((pct / 10 + 1) * 10))
      fi
    done
    if [ "$shown" = 1 ] && [ "$tty" = 1 ]; then printf '\r\033[K' >&2; fi
  }
  local rc="${PIPESTATUS[0]}"
  if [ "$rc" = 0 ] && grep -qE "$kf_status_line" "$log"; then
    printf 'kforge setup: built %s in %dm%ds\n' "$what" $(((SECONDS - start) / 60)) \
      $(((SECONDS - start) % 60)) >&2
  fi
  return "$rc"
}

# kf_build_errors LOG: the failed build's output in full, less the progress lines of the steps
# that went through.
kf_build_errors() {
  echo "kforge setup: the build failed; its output (also in $1):" >&2
  grep -vE "$kf_status_line" "$1" >&2 || true
}
