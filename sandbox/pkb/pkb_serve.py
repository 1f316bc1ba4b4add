#!/usr/bin/env python3
"""kforge's warm interpreter for PKB jobs: one python that has imported torch, Dynamo, the
checkout's input maker and the driver (pkb_eval.py) once, before any CUDA call, and then
forks a fresh child for every eval that kforge asks for. The child is the job a cold eval
would start (pkb_eval.main with its command line), without python's and torch's start-up
(import torch 2.8 s of a cold job on an H100, and Dynamo's import inside the 4.2 s of its
"load reference": bench/RESULTS.md, 2026-12-05).

Requests come as JSON lines on the FIFO <ctl>/requests: {"argv": [...], "env": {...},
"dir": D, "done": FILE, "writable": [...]}, or {"request": FILE} naming a file that holds
one. The child of a request:
  - runs in D (its cwd D/scratch, the environment the request gives), its output into
    D/job.log;
  - has each of its ranks confined by Landlock once CUDA and NCCL are up, before the rank
    loads the reference or the candidate (the driver calls pkb_eval.CONFINE, which this
    server sets; CUDA's start could not name its threads in a confined process): a rank
    reads what the server reads except the folders named by --hide (every other eval's
    folder, every other source's extension folder), and writes only D (its TMPDIR and
    HOME are there), the request's "writable" folders and /dev (NCCL's /dev/shm).
    Landlock also keeps it from ptrace-ing the server or reading its /proc files. It is a
    fresh process with a fresh address space: nothing one candidate does to its python
    survives into the next;
  - is killed with everything it started when it ends: the server is the subreaper of
    what it starts, so nothing a child leaves (in whatever session) gets out of its sight.
The server then writes the request's "done" file (kforge puts it where no child reaches):
{"rc": exit code, "signal": N, "seconds": s}. It ends when the FIFO has no writer left
(kforge ended) or on SIGTERM. One eval at a time.
Written for kforge (src/pkb/warm.h), not taken from PKB.

Usage: pkb_serve.py --ctl DIR --pkb ROOT --driver PKB_EVAL.py [--hide DIR]...
  [--private-shm]
"""
import argparse
import ctypes
import importlib.util
import json
import os
import signal
import sys
import time

# Landlock (linux/landlock.h): the syscalls and the filesystem rights, by ABI.
SYS_CREATE, SYS_ADD_RULE, SYS_RESTRICT = 444, 445, 446
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 2, 4, 8
WRITE_ALL = (WRITE_FILE | 16 | 32 | 64 | 128 | 256 | 512 | 1024 | 2048 | 4096)  # + remove/make
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, 3, 5
READ_ALL = EXECUTE | READ_FILE | READ_DIR
PR_SET_NO_NEW_PRIVS, PR_SET_PDEATHSIG = 38, 1


def preload(pkb_root, driver_path):
    """What every job imports, imported once here; CUDA stays uninitialized (a forked child
    could not use a CUDA the parent had initialized). A setup without torch still serves:
    each job then reports "environment" as a cold one would."""
    for name in ("torch", "torch.distributed", "torch._dynamo"):
        try:
            __import__(name)
        except Exception:
            pass
    sys.path.insert(0, pkb_root)
    try:
        __import__("utils.input_output_tensors")
    except Exception:
        pass
    sys.path.insert(0, os.path.dirname(os.path.abspath(driver_path)))  # its neighbours
    spec = importlib.util.spec_from_file_location("pkb_eval", driver_path)
    driver = importlib.util.module_from_spec(spec)
    sys.modules["pkb_eval"] = driver
    spec.loader.exec_module(driver)
    return driver


def landlock(hide, writable):
    """Confines this process: reads anything but the hidden folders, writes only
    under `writable`. Raises OSError where the kernel has no Landlock: the eval must not run
    unconfined where kforge asked for confinement."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(SYS_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi < 1:
        raise OSError(ctypes.get_errno(), "Landlock is not available in this kernel")
    rw = READ_ALL | WRITE_ALL | (REFER if abi >= 2 else 0) | (TRUNCATE if abi >= 3 else 0)
    dev = rw | (IOCTL_DEV if abi >= 5 else 0)
    attr = ctypes.c_uint64(dev)  # struct landlock_ruleset_attr, its ABI 1 field
    fd = libc.syscall(SYS_CREATE, ctypes.byref(attr), ctypes.c_size_t(8), ctypes.c_uint32(0))
    if fd < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")

    def allow(path, access):
        try:
            pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return
        if not os.path.isdir(path):
            access &= EXECUTE | READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV
        rule = (ctypes.c_uint8 * 12).from_buffer_copy(access.to_bytes(8, "little") + pfd.to_bytes(4, "little"))
        rc = libc.syscall(SYS_ADD_RULE, fd, 1, ctypes.byref(rule), 0)
        os.close(pfd)
        if rc != 0:
            raise OSError(ctypes.get_errno(), "landlock_add_rule " + path)

    for path in readable_beside("/", hide):
        allow(path, READ_ALL)
    for path in writable:
        allow(path, dev if path == "/dev" else rw)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.syscall(SYS_RESTRICT, fd, 0) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    os.close(fd)


def readable_beside(root, hide):
    """The paths that cover everything under root but the hidden folders: root itself where
    no hidden folder is beneath it; else, down the way to each hidden folder, every entry
    beside it."""
    root = os.path.realpath(root)
    inside = [h for h in hide if h == root or h.startswith(root.rstrip("/") + "/")]
    if not inside:
        return [root]
    if root in inside:
        return []
    out = []
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    for name in names:
        out += readable_beside(os.path.join(root, name), inside)
    return out


def descendants():
    """Every live process below this one, from /proc (orphans come back to it: it is their
    subreaper)."""
    kids = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/%s/stat" % name) as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            kids.setdefault(ppid, []).append(int(name))
    out, todo = [], [os.getpid()]
    while todo:
        for pid in kids.get(todo.pop(), []):
            out.append(pid)
            todo.append(pid)
    return out


def kill_leftovers():
    """Everything the eval's child started and left behind, wherever its session or group,
    killed and reaped before the next eval begins."""
    for _ in range(50):
        pids = descendants()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        if not pids:
            return
        time.sleep(0.01)


def run_child(driver, req, hide):
    d = req["dir"]
    os.setpgid(0, 0)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    log = os.open(os.path.join(d, "job.log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    os.makedirs(os.path.join(d, "scratch"), exist_ok=True)
    os.chdir(os.path.join(d, "scratch"))
    os.environ.clear()  # the job's own environment (its HOME and TMPDIR in its scratch)
    os.environ.update(req.get("env", {}))
    # Each rank confines itself once CUDA is up, before the reference or the candidate is
    # loaded (pkb_eval.CONFINE says why not here).
    writable = [d, "/dev"] + req.get("writable", [])

    def confine():
        # A process the rank starts cannot start CUDA once the rank is confined (its
        # threads' names go to /proc): Inductor's compile workers would (their set-up reads
        # the device's properties), so torch.compile compiles in the rank's own process.
        try:
            import torch._inductor.config as inductor
            inductor.compile_threads = 1
        except Exception:
            pass
        landlock(hide, writable)

    driver.CONFINE = confine
    code = 1
    try:
        code = driver.main(req["argv"])
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code or 0)


def serve(args, driver):
    fifo = open(os.path.join(args.ctl, "requests"), "r")
    hide = [os.path.realpath(h) for h in args.hide]
    for line in fifo:
        if not line.strip():
            continue
        req = json.loads(line)
        if "request" in req:  # a request too long for one write to the FIFO: its file
            with open(req["request"]) as f:
                req = json.load(f)
        t0 = time.time()
        child = os.fork()
        if child == 0:
            fifo.close()
            run_child(driver, req, hide)
        _, status = os.waitpid(child, 0)
        kill_leftovers()
        if args.private_shm:  # the jail's own /dev/shm: nothing of one eval for the next
            for name in os.listdir("/dev/shm"):
                try:
                    os.unlink(os.path.join("/dev/shm", name))
                except OSError:
                    pass
        done = {"rc": os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1,
                "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0,
                "seconds": round(time.time() - t0, 3)}
        path = req.get("done") or os.path.join(req["dir"], "done.json")
        with open(path + ".tmp", "w") as f:
            f.write(json.dumps(done))
        os.rename(path + ".tmp", path)
    return 0  # the FIFO's last writer (kforge) is gone


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--ctl", required=True)
    p.add_argument("--pkb", required=True)
    p.add_argument("--driver", required=True)
    p.add_argument("--hide", action="append", default=[])
    p.add_argument("--private-shm", action="store_true",
                   help="/dev/shm is this server's own (bwrap's): emptied after every eval")
    args = p.parse_args(argv)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # unconfined: end with kforge
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: orphans come back to be killed
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    libc.syscall.restype = ctypes.c_long
    if libc.syscall(SYS_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(1)) < 1:
        sys.stderr.write("Landlock is not available in this kernel: no eval is served unconfined\n")
        return 3  # before torch's import: kforge runs its evals cold at once
    driver = preload(args.pkb, args.driver)
    if not hasattr(driver, "CONFINE"):
        sys.stderr.write("%s has no CONFINE hook for the ranks' confinement: no eval is served "
                         "unconfined\n" % args.driver)
        return 3
    return serve(args, driver)


if __name__ == "__main__":
    sys.exit(main())
