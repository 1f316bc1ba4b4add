"""Whether this setup can run a PKB job at all, asked before any candidate is loaded: torch
imports, the checkout's utils import, torch sees CUDA and a GPU for each rank on this
machine (NCCL takes one a rank). A failure here is the user's setup, not the candidate's
doing: kforge reports it as an error that says what to change, and no verdict. Written
for kforge, not taken from PKB."""
import os
import sys
import traceback


def last_line():
    """The exception being handled, as Python's last traceback line says it."""
    return traceback.format_exception_only(*sys.exc_info()[:2])[-1].strip()


def cuda_unfit(torch, local_world):
    """Why this machine cannot run local_world ranks of a PKB job, or None. Every rank asks
    before it joins the process group, so that all stop and none waits for a peer."""
    if not torch.cuda.is_available():
        return "torch %s sees no CUDA device (built for CUDA %s; CUDA_VISIBLE_DEVICES=%s)" % (
            torch.__version__, torch.version.cuda, os.environ.get("CUDA_VISIBLE_DEVICES", "unset"))
    n = torch.cuda.device_count()
    if local_world > n:
        return "%d ranks need %d GPUs here (NCCL takes one a rank) and torch sees %d: pass --world %d" % (
            local_world, local_world, n, n)
    return None


def load_setup(pkb_root, local_world):
    """(torch, torch.distributed, the checkout's input maker), None; or None and why this
    setup cannot run a PKB job: no torch, a checkout whose utils do not import, no CUDA
    device, fewer GPUs than ranks."""
    try:
        import torch
        import torch.distributed as dist
    except Exception:
        return None, "import torch: " + last_line()
    if pkb_root not in sys.path:
        sys.path.insert(0, pkb_root)
    try:
        from utils.input_output_tensors import create_input_tensor
    except Exception:
        return None, "the checkout's utils/input_output_tensors.py: " + last_line()
    why = cuda_unfit(torch, local_world)
    return (None, why) if why else ((torch, dist, create_input_tensor), None)
