// A simple correct UVA candidate for quantized_grad_all_reduce: one kernel quantizes and
// dequantizes our x into a symmetric fp32 buffer d (a CUDA block per quantization block), a
// barrier kernel (every rank's d is ready), one kernel that loads d from every peer and
// writes the mean into y, and a second barrier (no peer's d is rewritten while another
// rank still reads it). Not optimized: every rank reads all of every peer's d in fp32.
#include <cstdint>
#include <kf/kf.cuh>

namespace {

// Before and after the sum: kf's one-block barrier kernel (<kf/signal.cuh>), slot 0 on
// entry and slot 1 on exit, with one epoch per call, so its words never need a reset.
kf::SignalSet g_sig;
float* g_d = nullptr;  // [n]: our dequantized x, read by every peer

constexpr int kThreads = 128;

int blocks_for(int64_t work) {
  return static_cast<int>(work < 1024 ? (work < 1 ? 1 : work) : 1024);
}

// d = dequantize(quantize(x)) for quantization blocks b = blockIdx.x, + gridDim.x, ...:
// scale = max(amax, 1e-8) / 127, code = x / scale rounded to even (both IEEE fp32
// divisions: __fdiv_rn, never a reciprocal), clamped to +-127.
__global__ void __launch_bounds__(kThreads)
    quant_kernel(const float* x, float* d, int64_t n, int64_t block) {
  __shared__ float warp_max[kThreads / 32];
  for (int64_t b = blockIdx.x; b * block < n; b += gridDim.x) {  // uniform in the block
    const int64_t begin = b * block, end = min(n, begin + block);
    float amax = 0.0f;
    for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) amax = fmaxf(amax, fabsf(x[i]));
    for (int o = 16; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
    if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = amax;
    __syncthreads();
    for (int w = 0; w < kThreads / 32; ++w) amax = fmaxf(amax, warp_max[w]);
    __syncthreads();  // warp_max is read by all before the next block rewrites it
    const float scale = __fdiv_rn(fmaxf(amax, 1e-8f), 127.0f);
    for (int64_t i = begin + threadIdx.x; i < end; i += kThreads)
      d[i] = fminf(fmaxf(rintf(__fdiv_rn(x[i], scale)), -127.0f), 127.0f) * scale;
  }
}

__global__ void mean_kernel(kf::Peers<const float> d, float* y, int64_t n, int world) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float s = 0.0f;
    for (int r = 0; r < world; ++r) s += d[r][i];
    y[i] = s / static_cast<float>(world);
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  g_sig = kf::make_signals(comm, 2);
  g_d = comm.alloc_array<float>(static_cast<size_t>(t["x"].numel));
  return g_sig.local && g_d ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const int64_t n = y.numel, block = t.iparam("block");
  const uint32_t epoch = kf::next_epoch();
  // Safe before the entry barrier: every peer finished reading our d before it passed the
  // last call's exit barrier, which we passed too.
  quant_kernel<<<blocks_for((n + block - 1) / block), kThreads, 0, comm.stream()>>>(
      x.ptr<const float>(), g_d, n, block);
  kf::launch_barrier(g_sig, 0, epoch, comm.stream());
  mean_kernel<<<blocks_for((n + 255) / 256), 256, 0, comm.stream()>>>(
      kf::peers(comm, static_cast<const float*>(g_d)), y.ptr<float>(), n, comm.world);
  kf::launch_barrier(g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
