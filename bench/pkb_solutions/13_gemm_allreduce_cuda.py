# kforge parity check, PKB problem 13: the GEMM's own output reduced in place (the
# reference clones it and makes both operands contiguous first).
import torch
import torch.distributed as dist


@torch.no_grad()
def solution(A_local: torch.Tensor, B_local: torch.Tensor) -> torch.Tensor:
    C = torch.matmul(A_local, B_local)
    dist.all_reduce(C, op=dist.ReduceOp.SUM)
    return C
