# kforge parity check, PKB problem 3: an empty output filled by copy_, then the broadcast.
import torch
import torch.distributed as dist


@torch.no_grad()
def solution(tensor: torch.Tensor, src: int = 0) -> torch.Tensor:
    out = torch.empty_like(tensor)
    out.copy_(tensor)
    dist.broadcast(out, src=src)
    return out
