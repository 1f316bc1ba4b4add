# kforge parity check, PKB problem 1: the reference's clone as a CUDA kernel of our own
# (16-byte loads and stores, grid-stride), then NCCL's all-reduce in place on its output.
import torch
import torch.distributed as dist
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void copy_vec(const int4* __restrict__ in, int4* __restrict__ out, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    out[i] = in[i];
}

torch::Tensor copy_out(torch::Tensor x) {
  auto y = torch::empty_like(x);
  long long bytes = x.numel() * x.element_size();
  auto stream = at::cuda::getCurrentCUDAStream();
  bool aligned = bytes % 16 == 0 && reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 == 0 &&
                 reinterpret_cast<uintptr_t>(y.data_ptr()) % 16 == 0;
  if (!aligned) {
    cudaMemcpyAsync(y.data_ptr(), x.data_ptr(), bytes, cudaMemcpyDeviceToDevice, stream);
    return y;
  }
  long long n = bytes / 16;
  int threads = 256;
  long long blocks = (n + threads - 1) / threads;
  if (blocks > 132 * 8) blocks = 132 * 8;
  if (blocks > 0)
    copy_vec<<<(unsigned)blocks, threads, 0, stream>>>(
        reinterpret_cast<const int4*>(x.data_ptr()), reinterpret_cast<int4*>(y.data_ptr()), n);
  return y;
}
"""

_ext = None


def _lib():
    global _ext
    if _ext is None:
        _ext = load_inline(name="kf_parity_copy", cpp_sources="torch::Tensor copy_out(torch::Tensor x);",
                           cuda_sources=_CUDA, functions=["copy_out"], verbose=False)
    return _ext


@torch.no_grad()
def solution(tensor: torch.Tensor) -> torch.Tensor:
    out = _lib().copy_out(tensor.contiguous())
    dist.all_reduce(out, op=dist.ReduceOp.SUM)
    return out
