// Fault (problem gemm_all_reduce): problems/gemm_all_reduce/examples/uva.cu with one planted
// bug: the tiled GEMM assumes K is a multiple of its 16-wide tile and drops the last partial
// step of k, so when K % 16 != 0 (the small size's K = 200 loses k = 192..199) every
// partial product misses those terms, at every world size (1, 2, 4 ...), and c is off by
// about 0.2 (the missing 8/200 of its variance) at most elements. Verdict: mismatch on c.
#include <cuda_bf16.h>

#include <cstdint>
#include <kf/kf.cuh>

namespace {

constexpr int kTile = 16;

// kf's one-block barrier kernel (<kf/signal.cuh>): slot 0 after the product, slot 1 at
// the end, with one epoch per call, so its words never need a reset.
kf::SignalSet g_sig;
float* g_partial = nullptr;  // [M, N]

int blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<int>(b < 4096 ? (b < 1 ? 1 : b) : 4096);
}

// p = a @ b, a [m, k] and b [k, n] row-major. Block (x, y) computes the output tiles of
// tile column x and tile rows y, y + gridDim.y, ...; thread (tx, ty) one element of each.
// Loads past an edge (m, n or the last partial step of k) read as 0.
__global__ void matmul_kernel(const __nv_bfloat16* a, const __nv_bfloat16* b, float* p, int64_t m,
                              int64_t k, int64_t n) {
  __shared__ float as[kTile][kTile];
  __shared__ float bs[kTile][kTile + 1];  // +1: no bank conflicts on the column reads
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t col = blockIdx.x * static_cast<int64_t>(kTile) + tx;
  const int64_t tile_rows = (m + kTile - 1) / kTile;
  for (int64_t tr = blockIdx.y; tr < tile_rows; tr += gridDim.y) {  // uniform in the block
    const int64_t row = tr * kTile + ty;
    float acc = 0.0f;
    for (int64_t k0 = 0; k0 + kTile <= k; k0 += kTile) {  // the bug: no k tail
      as[ty][tx] = row < m && k0 + tx < k ? __bfloat162float(a[row * k + k0 + tx]) : 0.0f;
      bs[ty][tx] = k0 + ty < k && col < n ? __bfloat162float(b[(k0 + ty) * n + col]) : 0.0f;
      __syncthreads();
      for (int kk = 0; kk < kTile; ++kk) acc += as[ty][kk] * bs[kk][tx];
      __syncthreads();  // the tiles are read before the next step overwrites them
    }
    if (row < m && col < n) p[row * n + col] = acc;
  }
}

// c[e] = sum over ranks s of p(s)[e], e < count, summed in rank order in fp32.
__global__ void sum_kernel(kf::Peers<const float> p, __nv_bfloat16* c, int64_t count, int world) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float s = 0.0f;
    for (int r = 0; r < world; ++r) s += p[r][e];
    c[e] = __float2bfloat16_rn(s);
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  g_sig = kf::make_signals(comm, 2);
  g_partial = comm.alloc_array<float>(static_cast<size_t>(t["c"].numel));
  return g_sig.local && g_partial ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& a = t["a"];
  const kf::Tensor& b = t["b"];
  kf::Tensor& c = t["c"];
  const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  const uint32_t epoch = kf::next_epoch();
  // No barrier first: the last call's final barrier saw every peer done with our partial.
  const int64_t tile_rows = (m + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>((n + kTile - 1) / kTile),
                  static_cast<unsigned>(tile_rows < 65535 ? tile_rows : 65535));
  matmul_kernel<<<grid, dim3(kTile, kTile), 0, comm.stream()>>>(
      a.ptr<const __nv_bfloat16>(), b.ptr<const __nv_bfloat16>(), g_partial, m, k, n);
  kf::launch_barrier(g_sig, 0, epoch, comm.stream());
  sum_kernel<<<blocks_for(m * n), 256, 0, comm.stream()>>>(
      kf::peers(comm, static_cast<const float*>(g_partial)), c.ptr<__nv_bfloat16>(), m * n,
      comm.world);
  kf::launch_barrier(g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
