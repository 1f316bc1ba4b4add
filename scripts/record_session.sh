#!/usr/bin/env bash
# Records docs/session.md: two `kforge solve` sessions on a tmux terminal against the
# loopback model (tests/fake_llm), the screens captured as text at each step, so a reader
# can follow the live view without running it. Needs a build (build/kforge,
# build/fake_llm_server), tmux and python3 (to write the model's script). Run again after
# the live view changes: `scripts/record_session.sh [OUT.md]`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/docs/session.md}"
build="${KF_BUILD_DIR:-$root/build}"
work="$(mktemp -d /tmp/kforge-session-XXXXXX)"
sess="kforge-rec-$$"
server_pid=""
cleanup() {
  tmux kill-session -t "$sess" 2>/dev/null || true
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
command -v tmux >/dev/null || { echo "record_session: install tmux (apt-get install tmux)" >&2; exit 2; }

# The model's replies: OpenAI streams, one chunk per 48 bytes, 40 ms apart.
python3 - "$root" "$work" <<'EOF'
import json, sys
root, work = sys.argv[1], sys.argv[2]
def stream(text, hold=None, release="release"):
    pieces = ["data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": text[i:i+48]}}]}) + "\n\n"
              for i in range(0, len(text), 48)]
    pieces.append("data: " + json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                  "usage": {"prompt_tokens": 5200, "completion_tokens": len(text) // 4}}) + "\n\n")
    pieces.append("data: [DONE]\n\n")
    step = {"stream": pieces, "delay_ms_between": 40}
    if hold is not None:
        step.update({"hold_before_piece": hold, "hold_until_file": work + "/" + release})
    return step
def kernel(path, prose):
    return prose + "\n\n```cpp\n" + open(root + path).read() + "```\n"
def bash(thought, cmd):
    return thought + "\n\n```bash\n" + cmd + "\n```\n"
direct = [
    stream(kernel("/tests/kernels/host/wrong_rank.cpp",
                  "Each rank copies its input to every peer's staging slot, waits at a barrier,\n"
                  "then sums the world's slots into y. The barrier is an epoch counter per rank,\n"
                  "so it can be reused every call without a reset.\n"
                  "I add the peer's contribution after the sum to overlap the copy."), hold=4),
    stream(kernel("/problems/all_reduce/examples/host.cpp",
                  "The mismatch was the extra peer term: every element was summed twice.\n"
                  "This version only sums the staged slots, once each."))]
host = open(root + "/problems/all_reduce/examples/host.cpp").read()
agent = [
    stream(bash("What does the workspace hold, and what am I told?", "pwd; ls -A; env | grep ^KF_ | sort")),
    stream(bash("Start from a clean slate.", "rm -rf ~/* ~/.kforge")),
    stream(bash("Read the host header first.", "sed -n 1,12p $KF_INCLUDE/kf/host.h")),
    stream(bash("Write the kernel and check it with kforge eval before submitting.",
                "cat > kernel.cpp <<'KFEOF'\n" + host + "KFEOF\n"
                "kforge eval $KF_PROBLEM kernel.cpp --world 2 --backend host --size small --no-time | head -3"),
           hold=1, release="release2"),
    stream(bash("It is correct: submit.", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"))]
json.dump(direct, open(work + "/direct.json", "w"))
json.dump(agent, open(work + "/agent.json", "w"))
EOF

start_server() {  # $1: script
  rm -f "$work/port" "$work/release" "$work/release2"
  "$build/fake_llm_server" --script "$1" --log "$work/log.jsonl" --port-file "$work/port" \
    --idle-s 600 --stall-s 600 >/dev/null &
  server_pid=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
}
# How many rows of the whole history show $1 (a fixed string).
count() { tmux capture-pane -p -t "$sess" -S -3000 | grep -cF -- "$1" || true; }
# Waits until more rows than $2 (default 0) show $1, for up to 300 s: `n=$(count X)`
# before typing, `wait_for X $n` after, so an earlier prompt does not count.
wait_for() {
  for _ in $(seq 3000); do
    [ "$(count "$1")" -gt "${2:-0}" ] && return 0
    sleep 0.1
  done
  echo "record_session: '$1' never appeared" >&2
  tmux capture-pane -p -t "$sess" -S -400 >&2
  exit 1
}
# Appends the visible screen to the document, trailing blank rows dropped.
screen() {
  echo "$1" >>"$out"
  echo >>"$out"
  echo '```' >>"$out"
  tmux capture-pane -p -t "$sess" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' >>"$out"
  echo '```' >>"$out"
  echo >>"$out"
}
keys() { tmux send-keys -t "$sess" "$@"; sleep 0.3; }
run_solve() {  # $@: solve's extra flags
  tmux kill-session -t "$sess" 2>/dev/null || true
  tmux new-session -d -s "$sess" -x 80 -y 34 \
    "cd $work && PS1='$ ' KFORGE_RUNS=$work/runs OPENAI_API_KEY=sk-loopback \
     $build/kforge solve all_reduce --backend host --world 2 --model openai:demo-model \
     --base-url http://127.0.0.1:$(cat "$work/port")/v1 $*; echo; echo \"[kforge exited with \$?]\"; sleep 600"
}

cat >"$out" <<'EOF'
# A `kforge solve` session, as a terminal shows it

Recorded by `scripts/record_session.sh` on an 80x34 tmux window against the loopback
model (`tests/fake_llm`, scripted replies streamed 48 bytes at a time), on the host
backend, so anyone can replay it without a GPU or an API key. Each block is the visible
screen, captured as text (the colours are not in the capture: verdicts are green,
yellow or red, the kernel view is highlighted). Paths under /tmp are the recorder's
scratch folder.

## 1. Direct mode: a wrong kernel, a hint, a correct one

EOF
start_server "$work/direct.json"
run_solve --max-turns 4
wait_for "(silent 3s)"
screen "The header says what runs where before anything else. The model is writing turn 1; the server has sent part of the reply and then stalled (the loopback server holds the rest back). The last lines of the reply stream above the status line, whose spinner and clock keep moving and which says how long nothing has arrived:"
touch "$work/release"
wait_for "Enter: next turn"
screen "The reply arrived: it is printed collapsed (three lines of prose, the first lines of its code block), the kernel is evaluated (the status line says compiling, then running 2 ranks), and the verdict is printed whole, wrapped to the terminal. The menu waits:"
n=$(count "Enter: next turn")
keys v Enter
wait_for "I add the peer"
keys q
wait_for "Enter: next turn" "$n"
n=$(count "Enter: next turn")
keys s Enter
wait_for "   25:"
screen "\`s\` shows the kernel with line numbers (highlighted in colour on a real terminal) through \`less\`, since it is longer than the screen. (\`v\` before it showed the whole reply the same way.)"
keys q
wait_for "Enter: next turn" "$n"
keys "h the barrier is fine; check how many times each element is summed" Enter
wait_for "Done after 2 turns"
screen "A hint typed at the menu is acknowledged at once, shown again when the turn it goes with opens, and sent with that turn's prompt. Turn 2's kernel is correct, which on the host backend is the target; the end says what happened, where the kernel and the trajectory are, and what to do next:"
kill "$server_pid" 2>/dev/null || true
server_pid=""

cat >>"$out" <<'EOF'
## 2. Agent mode with `--confirm`: run, reject, edit

The model answers with one bash command a turn; `--confirm` shows each one and waits.

EOF
start_server "$work/agent.json"
run_solve --mode agent --confirm --size small --no-time --max-turns 8
wait_for "run?"
screen "The header says commands wait for a yes. Turn 1's command, shown whole before it runs:"
keys Enter
wait_for "run?" 1
screen "Enter ran it: the exit code and the tail of its output are printed under it. Turn 2 wants to delete the workspace:"
keys n Enter
wait_for "why"
keys "keep the workspace; nothing in it is in the way" Enter
wait_for "run?" 2
keys e Enter
wait_for "command (Enter keeps it)>"
keys 'sed -n 1,4p $KF_INCLUDE/kf/host.h' Enter
wait_for "(silent 3s)"
screen "\`n\` rejected turn 2's command with a reason, which the model gets instead of an output; \`e\` replaced turn 3's command with a shorter one, which ran (the model is told what ran instead). The model is writing turn 4 (held back by the loopback server for this capture):"
touch "$work/release2"
wait_for "run?" 3
screen "Turn 4 writes the kernel with a heredoc and checks it; the command is shown whole (its end is on screen):"
keys y Enter
wait_for "run?" 4
keys y Enter
wait_for "kforge exited"
screen "Turn 4's own \`kforge eval\` said correct; turn 5 submits, kforge evaluates the kernel itself, and the run ends:"
echo "record_session: wrote $out" >&2
