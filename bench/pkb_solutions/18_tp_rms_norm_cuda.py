# kforge parity check, PKB problem 18: tensor-parallel RMSNorm, the sum of squares in one
# float32 reduction, reduced across ranks, then the scale.
import torch
import torch.distributed as dist


def solution(local_hidden_states: torch.Tensor, local_weight: torch.Tensor, variance_epsilon: float) -> torch.Tensor:
    dtype = local_hidden_states.dtype
    x = local_hidden_states.float()
    sum_sq = torch.sum(x * x, dim=-1, keepdim=True)
    dist.all_reduce(sum_sq, op=dist.ReduceOp.SUM)
    hidden = x.shape[-1] * dist.get_world_size()
    y = x * torch.rsqrt(sum_sq / hidden + variance_epsilon)
    return local_weight * y.to(dtype)
