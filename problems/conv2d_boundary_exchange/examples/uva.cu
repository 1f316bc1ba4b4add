// A simple correct UVA candidate for conv2d_boundary_exchange: a barrier kernel (every
// rank's x is this call's); one kernel, a thread per output element, that sums its 3x3
// window over every input channel in fp32, loading the row above our first row from the
// previous rank's x and the row below our last row from the next rank's x through UVA;
// a second barrier (no rank's x is regenerated while a neighbour still reads it).
#include <cuda_bf16.h>

#include <cstdint>
#include <kf/kf.cuh>

namespace {

// kf's one-block barrier kernel (<kf/signal.cuh>): slot 0 on entry and slot 1 on exit,
// with one epoch per call, so its words never need a reset.
kf::SignalSet g_sig;

int blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<int>(b < 4096 ? (b < 1 ? 1 : b) : 4096);
}

struct Dims {
  int64_t b, c, h, w;
};

// Row g (-1 <= g <= h) of plane p of our padded input: our own row, the previous rank's
// last row (g = -1) or the next rank's first row (g = h); nullptr where it is zeros.
__device__ const __nv_bfloat16* row_of(const kf::Peers<const __nv_bfloat16>& x, int64_t p,
                                       int64_t g, const Dims& d, int rank, int world) {
  int src = rank;
  int64_t r = g;
  if (g < 0) {
    if (rank == 0) return nullptr;
    src = rank - 1, r = d.h - 1;
  } else if (g >= d.h) {
    if (rank == world - 1) return nullptr;
    src = rank + 1, r = 0;
  }
  return x[src] + (p * d.h + r) * d.w;
}

// y[b][o][h][w] = bias[o] + sum over i, kh, kw of weight[o][i][kh][kw] * X[b][i][h+kh-1][w+kw-1].
__global__ void conv_kernel(kf::Peers<const __nv_bfloat16> x, const __nv_bfloat16* weight,
                            const __nv_bfloat16* bias, __nv_bfloat16* y, Dims d, int rank,
                            int world) {
  const int64_t total = d.b * d.c * d.h * d.w;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t w = e % d.w, h = e / d.w % d.h, o = e / (d.w * d.h) % d.c;
    const int64_t b = e / (d.w * d.h * d.c);
    float s = 0.0f;
    for (int64_t i = 0; i < d.c; ++i)
      for (int64_t kh = 0; kh < 3; ++kh) {
        const __nv_bfloat16* row = row_of(x, b * d.c + i, h + kh - 1, d, rank, world);
        if (!row) continue;  // zero padding above rank 0 or below the last rank
        for (int64_t kw = 0; kw < 3; ++kw) {
          const int64_t col = w + kw - 1;  // zeros left of column 0 and right of w - 1
          if (col >= 0 && col < d.w)
            s += __bfloat162float(weight[((o * d.c + i) * 3 + kh) * 3 + kw]) *
                 __bfloat162float(row[col]);
        }
      }
    y[e] = __float2bfloat16_rn(s + __bfloat162float(bias[o]));
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  g_sig = kf::make_signals(comm, 2);
  return g_sig.local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  const Dims d{x.shape[0], x.shape[1], x.shape[2], x.shape[3]};
  const uint32_t epoch = kf::next_epoch();
  kf::launch_barrier(g_sig, 0, epoch, comm.stream());
  conv_kernel<<<blocks_for(d.b * d.c * d.h * d.w), 256, 0, comm.stream()>>>(
      kf::peers(comm, x.ptr<const __nv_bfloat16>()), t["weight"].ptr<const __nv_bfloat16>(),
      t["bias"].ptr<const __nv_bfloat16>(), t["y"].ptr<__nv_bfloat16>(), d, comm.rank, comm.world);
  kf::launch_barrier(g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
