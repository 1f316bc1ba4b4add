// rope_all_gather baseline: what PyTorch runs for
//   q_embed = q * cos.unsqueeze(2) + rotate_half(q) * sin.unsqueeze(2)   (and k the same)
//   dist.all_gather(q_list, q_embed); dist.all_gather(k_list, k_embed)
//   q_out = torch.cat(q_list, dim=1); k_out = torch.cat(k_list, dim=1)
// one elementwise kernel per tensor that rounds like PyTorch's bf16 ops (each product
// rounded to bf16, then the sum), then per tensor: one ncclAllGather into a flat
// [world, B, S, H, D] scratch, the copy of each rank's piece out of it into its list
// tensor (what ProcessGroupNCCL's all_gather does for a list of outputs: a
// cudaMemcpyAsync each), and one copy kernel that lays the list along the sequence
// (torch.cat's copy). The two all_gathers are separate NCCL calls, as in the reference.
#include <cuda_bf16.h>
#include <nccl.h>

#include <kf/kf.cuh>

namespace {

constexpr int kThreads = 256;

__nv_bfloat16* g_embedded = nullptr;  // [2][B, S, H, D]: our embedded q, then k
__nv_bfloat16* g_flat = nullptr;      // [world][B, S, H, D]: all_gather's flat output
__nv_bfloat16* g_list = nullptr;      // [world][B, S, H, D]: the list tensors
int64_t g_numel = 0;

int blocks_for(int64_t n) {
  return static_cast<int>(kf::min64(kf::ceil_div(n, kThreads), 1024));
}

// out = x * cos + rotate_half(x) * sin over [rows = B * S, H, D], cos/sin [rows, D].
__global__ void rope_kernel(const __nv_bfloat16* x, const __nv_bfloat16* c, const __nv_bfloat16* n,
                            __nv_bfloat16* out, int64_t rows, int64_t H, int64_t D) {
  const int64_t total = rows * H * D, h = D / 2;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t d = e % D, r = e / (H * D);  // r: the cos/sin row
    const float rot = d < h ? -__bfloat162float(x[e + h]) : __bfloat162float(x[e - h]);
    const __nv_bfloat16 a =
        __float2bfloat16_rn(__bfloat162float(x[e]) * __bfloat162float(c[r * D + d]));
    const __nv_bfloat16 b = __float2bfloat16_rn(rot * __bfloat162float(n[r * D + d]));
    out[e] = __float2bfloat16_rn(__bfloat162float(a) + __bfloat162float(b));
  }
}

// out[b][s*S + i] = list[s][b][i] over whole positions of `piece` = S * H * D elements.
__global__ void cat_kernel(const __nv_bfloat16* list, __nv_bfloat16* out, int64_t batches,
                           int64_t piece, int world) {
  const int64_t total = batches * world * piece;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t b = e / (world * piece), s = e / piece % world, off = e % piece;
    out[e] = list[(s * batches + b) * piece + off];
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  g_numel = t["q"].numel;
  const size_t n = static_cast<size_t>(g_numel);
  g_embedded = comm.alloc_array<__nv_bfloat16>(2 * n);
  g_flat = comm.alloc_array<__nv_bfloat16>(comm.world * n);
  g_list = comm.alloc_array<__nv_bfloat16>(comm.world * n);
  return g_embedded && g_flat && g_list ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& q = t["q"];
  const int64_t B = q.shape[0], S = q.shape[1], H = q.shape[2], D = q.shape[3];
  if (q.numel != g_numel) return 1;  // not the shape kf_setup sized the scratch for
  cudaStream_t st = comm.stream();
  ncclComm_t nc = static_cast<ncclComm_t>(comm.nccl_);
  const __nv_bfloat16* c = t["cos"].ptr<const __nv_bfloat16>();
  const __nv_bfloat16* n = t["sin"].ptr<const __nv_bfloat16>();
  const char* const ins[2] = {"q", "k"};
  const char* const outs[2] = {"q_out", "k_out"};
  for (int w = 0; w < 2; ++w)
    rope_kernel<<<blocks_for(g_numel), kThreads, 0, st>>>(t[ins[w]].ptr<const __nv_bfloat16>(), c,
                                                          n, g_embedded + w * g_numel, B * S, H, D);
  for (int w = 0; w < 2; ++w) {  // all_gather(q_list, q_embed), then cat; then k
    if (ncclAllGather(g_embedded + w * g_numel, g_flat, static_cast<size_t>(g_numel), ncclBfloat16,
                      nc, st) != ncclSuccess)
      return 1;
    for (int s = 0; s < comm.world; ++s)
      if (cudaMemcpyAsync(g_list + s * g_numel, g_flat + s * g_numel, q.bytes(),
                          cudaMemcpyDeviceToDevice, st) != cudaSuccess)
        return 1;
    cat_kernel<<<blocks_for(comm.world * g_numel), kThreads, 0, st>>>(
        g_list, t[outs[w]].ptr<__nv_bfloat16>(), B, S * H * D, comm.world);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
