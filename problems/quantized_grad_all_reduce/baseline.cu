// quantized_grad_all_reduce baseline: what PyTorch runs for the reference
//   rec = block_int8_quant_dequant(x, block); dist.all_reduce(rec, SUM); rec.div_(world)
// as three steps on the stream the sandbox times: one simple kernel for the quantize-
// dequantize (PyTorch's chain of elementwise and amax kernels, fused, a CUDA block per
// quantization block), writing the fp32 values straight into y; one in-place ncclAllReduce
// of y in fp32 (sum), which is the reference's collective; and one kernel for the div_.
#include <nccl.h>

#include <kf/kf.cuh>

namespace {

constexpr int kThreads = 128;

// The largest v over the CUDA block; every thread gets it.
__device__ float block_max(float v) {
  __shared__ float warp_max[kThreads / 32];
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = v;
  __syncthreads();
  float m = 0.0f;
  for (int w = 0; w < kThreads / 32; ++w) m = fmaxf(m, warp_max[w]);
  __syncthreads();  // every thread has read warp_max before the next block rewrites it
  return m;
}

// d = dequantize(quantize(x)) per quantization block b (grid-strided): scale =
// max(amax, 1e-8) / 127 in fp32, code = x / scale (IEEE division) rounded to even, clamped.
__global__ void __launch_bounds__(kThreads)
    quant_dequant(const float* x, float* d, int64_t n, int64_t block) {
  const int64_t blocks = (n + block - 1) / block;
  for (int64_t b = blockIdx.x; b < blocks; b += gridDim.x) {  // uniform in the CUDA block
    const int64_t begin = b * block, end = min(n, begin + block);
    float amax = 0.0f;
    for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) amax = fmaxf(amax, fabsf(x[i]));
    const float scale = __fdiv_rn(fmaxf(block_max(amax), 1e-8f), 127.0f);
    for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) {
      const float code = fminf(fmaxf(rintf(__fdiv_rn(x[i], scale)), -127.0f), 127.0f);
      d[i] = code * scale;
    }
  }
}

__global__ void divide(float* y, int64_t n, float world) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] /= world;
}

int grid(int64_t work, int per_block) {
  const int64_t g = (work + per_block - 1) / per_block;
  return static_cast<int>(g < 1 ? 1 : (g > 65535 ? 65535 : g));
}

}  // namespace

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const int64_t n = y.numel, block = t.iparam("block");
  quant_dequant<<<grid((n + block - 1) / block, 1), kThreads, 0, comm.stream()>>>(
      x.ptr<const float>(), y.ptr<float>(), n, block);
  ncclComm_t nc = static_cast<ncclComm_t>(comm.nccl_);
  if (ncclAllReduce(y.data, y.data, static_cast<size_t>(n), ncclFloat, ncclSum, nc,
                    comm.stream()) != ncclSuccess)
    return 1;
  divide<<<grid(n, 256), 256, 0, comm.stream()>>>(y.ptr<float>(), n,
                                                  static_cast<float>(comm.world));
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
