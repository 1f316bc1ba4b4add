# Honest: the elementwise parts compiled by torch.compile (Inductor, Triton), the
# all-reduce between them in eager mode. Must not be rejected.
import torch
import torch.distributed as dist


@torch.compile(dynamic=False)
def _sum_sq(x):
    x = x.float()
    return x, torch.sum(x * x, dim=-1, keepdim=True)


@torch.compile(dynamic=False)
def _scale(x, sum_sq, weight, hidden, eps, dtype: torch.dtype):
    return weight * (x * torch.rsqrt(sum_sq / hidden + eps)).to(dtype)


def solution(local_hidden_states: torch.Tensor, local_weight: torch.Tensor, variance_epsilon: float) -> torch.Tensor:
    x, sum_sq = _sum_sq(local_hidden_states)
    dist.all_reduce(sum_sq)
    hidden = x.shape[-1] * dist.get_world_size()
    return _scale(x, sum_sq, local_weight, hidden, variance_epsilon, local_hidden_states.dtype)
