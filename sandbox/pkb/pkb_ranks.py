"""The ranks' processes of a PKB job that pkb_eval.py starts itself (its launch()): a free
port for their rendezvous, torchrun's environment for each, and the wait for them that
ends the peers of a rank that died, as torchrun does."""
import os
import signal
import socket
import sys
import time

# How long the peers of a rank that died get to finish before they are killed: they wait in
# a collective that will never complete.
GRACE_S = 10.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_environment(rank, world, port):
    """torchrun's variables for one rank of `world` on this host."""
    return {"RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": str(world),
            "LOCAL_WORLD_SIZE": str(world), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}


def wait_ranks(pids, grace_s=GRACE_S):
    """Waits for every process of `pids` ({pid: rank}). Once one fails, the rest get grace_s,
    then are killed. The exit code is the first failed rank's (128 + N for signal N)."""
    pids = dict(pids)
    first_bad, deadline = 0, None
    while pids:
        if deadline is not None and time.time() > deadline:
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
        pid, status = os.waitpid(-1, os.WNOHANG if deadline is not None else 0)
        if pid == 0:
            time.sleep(0.05)
            continue
        pids.pop(pid, None)
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            sys.stderr.write("rank %s ended with %s\n" % (pid, "signal %d" % -code if code < 0 else "exit %d" % code))
            if not first_bad:
                first_bad = code if code > 0 else 128 - code
                deadline = time.time() + grace_s
    return first_bad
