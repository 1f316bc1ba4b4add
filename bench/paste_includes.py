#!/usr/bin/env python3
"""bench/paste_includes.py CASE OUT: a candidate is one file, so every #include "NAME" of
CASE (a header beside it, or ../forge.h) is replaced by that file's text, once,
recursively; a NAME found nowhere is dropped (the harness's own headers come with
<kf/kf.cuh>). tests/faults_test.cpp does the same for the host cases."""
import os
import re
import sys


def pasted(path, done):
    def include(m):
        p = os.path.normpath(os.path.join(os.path.dirname(path), m.group(1)))
        if p in done or not os.path.exists(p):
            return ""
        done.add(p)
        return pasted(p, done)
    with open(path) as f:
        return re.sub(r'#include "([^"]+)"', include, f.read())


if __name__ == "__main__":
    case, out = sys.argv[1:]
    with open(out, "w") as f:
        f.write(pasted(case, set()))
