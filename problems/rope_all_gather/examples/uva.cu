// A simple correct UVA candidate for rope_all_gather: a barrier kernel (every rank's q, k,
// cos and sin are this call's); one kernel that, for every element of our q_out and
// k_out, loads the source element, its rotate_half partner and its cos/sin from the
// owning rank through UVA and writes the embedded value, computed in fp32 and rounded
// once; a second barrier (no peer's inputs are regenerated while another rank still
// reads them).
#include <cuda_bf16.h>

#include <cstdint>
#include <kf/kf.cuh>

namespace {

constexpr int kThreads = 256;

// kf's one-block barrier kernel (<kf/signal.cuh>): slot 0 on entry and slot 1 on exit,
// with one epoch per call, so its words never need a reset.
kf::SignalSet g_sig;

struct Inputs {
  kf::Peers<const __nv_bfloat16> q, k, cos, sin;  // every rank's inputs
};

// Output element e of q_out (e < total) or k_out (e >= total): [B, world * S, H, D].
__global__ void rope_gather_kernel(Inputs in, __nv_bfloat16* q_out, __nv_bfloat16* k_out, int64_t S,
                                   int64_t H, int64_t D, int world, int64_t total) {
  const int64_t piece = S * H * D, h = D / 2;  // one rank's slice of one batch
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < 2 * total;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const bool is_k = g >= total;
    const int64_t e = is_k ? g - total : g;
    const int64_t b = e / (world * piece), s = e / piece % world, off = e % piece;
    const int64_t src = b * piece + off, d = off % D, row = (b * S + off / (H * D)) * D + d;
    const __nv_bfloat16* x = is_k ? in.k[static_cast<int>(s)] : in.q[static_cast<int>(s)];
    const float rot = d < h ? -__bfloat162float(x[src + h]) : __bfloat162float(x[src - h]);
    const float v = __bfloat162float(x[src]) * __bfloat162float(in.cos[static_cast<int>(s)][row]) +
                    rot * __bfloat162float(in.sin[static_cast<int>(s)][row]);
    (is_k ? k_out : q_out)[e] = __float2bfloat16_rn(v);
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  g_sig = kf::make_signals(comm, 2);
  return g_sig.local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& q = t["q"];
  kf::Tensor& q_out = t["q_out"];
  Inputs in;
  in.q = kf::peers(comm, q.ptr<const __nv_bfloat16>());
  in.k = kf::peers(comm, t["k"].ptr<const __nv_bfloat16>());
  in.cos = kf::peers(comm, t["cos"].ptr<const __nv_bfloat16>());
  in.sin = kf::peers(comm, t["sin"].ptr<const __nv_bfloat16>());
  const int64_t total = q_out.numel;
  const int blocks = static_cast<int>(kf::min64(kf::ceil_div(2 * total, kThreads), 1024));
  const uint32_t epoch = kf::next_epoch();
  kf::launch_barrier(g_sig, 0, epoch, comm.stream());
  rope_gather_kernel<<<blocks, kThreads, 0, comm.stream()>>>(
      in, q_out.ptr<__nv_bfloat16>(), t["k_out"].ptr<__nv_bfloat16>(), q.shape[1], q.shape[2],
      q.shape[3], comm.world, total);
  kf::launch_barrier(g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
