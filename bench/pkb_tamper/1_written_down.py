# Cheats the check: PKB's problem 1 fills every rank's input with the rank's number, so the
# sum is known without communicating. The timed blocks' last call, on inputs of small
# random integers, must show it.
import torch
import torch.distributed as dist


def solution(tensor: torch.Tensor) -> torch.Tensor:
    w = dist.get_world_size()
    return torch.full_like(tensor, float(w * (w + 1) // 2))
