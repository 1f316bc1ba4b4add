#!/usr/bin/env python3
# bench/replay_of.py OUT.jsonl [--edit] KERNEL...: a trajectory whose replies are the given
# kernels, in order, for `kforge solve --model replay:OUT.jsonl`: the agent loop evaluates
# exactly these files, one a turn, through the same path a model's kernels take (and so
# through warm ranks). --edit appends a distinct comment to each, so that every one is a
# new build (what an edited kernel costs) rather than a cached one.
import json
import os
import sys


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit("usage: bench/replay_of.py OUT.jsonl [--edit] KERNEL...")
    out, files = args[0], args[1:]
    edit = files[0] == "--edit"
    if edit:
        files = files[1:]
    lines = [{"type": "header", "format": "kforge-trajectory-1", "problem": "replayed",
              "model": "replay", "mode": "direct"}]
    for turn, path in enumerate(files, 1):
        src = open(path).read()
        py = path.endswith(".py")
        if edit:
            src += f"\n{'#' if py else '//'} edit {turn} {os.getpid()}\n"
        lang = "python" if py else "cpp" if path.endswith(".cpp") else "cuda"
        lines.append({"type": "reply", "turn": turn, "text": f"```{lang}\n{src}```\n"})
    with open(out, "w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
