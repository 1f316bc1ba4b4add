// A simple correct UVA candidate for gemm_all_gather, neither fused nor overlapped: one
// kernel computes our piece a @ b in fp32 with 16 x 16 shared-memory tiles straight into
// our column block of c (columns rank*N/w to (rank+1)*N/w - 1); a barrier kernel (every
// rank's block is in its c); one kernel copies every peer's block out of the peer's c
// into the same columns of ours; a second barrier (no peer's c is poisoned for the next
// call while another rank still reads it).
#include <cuda_bf16.h>

#include <cstdint>
#include <kf/kf.cuh>

namespace {

constexpr int kTile = 16;

// kf's one-block barrier kernel (<kf/signal.cuh>): slot 0 after the product, slot 1 at
// the end, with one epoch per call, so its words never need a reset.
kf::SignalSet g_sig;

int blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<int>(b < 4096 ? (b < 1 ? 1 : b) : 4096);
}

// c[i][col0 + j] = sum over kk < k of a[i][kk] * b[kk][j], a [m, k] and b [k, nl]
// row-major, c [m, ldc]. Block (x, y) computes the tiles of tile column x and tile rows
// y, y + gridDim.y, ...; thread (tx, ty) one element of each. Loads past an edge (m, nl or
// the last partial step of k) read as 0.
__global__ void matmul_kernel(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c,
                              int64_t m, int64_t k, int64_t nl, int64_t ldc, int64_t col0) {
  __shared__ float as[kTile][kTile];
  __shared__ float bs[kTile][kTile + 1];  // +1: no bank conflicts on the column reads
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t col = blockIdx.x * static_cast<int64_t>(kTile) + tx;
  const int64_t tile_rows = (m + kTile - 1) / kTile;
  for (int64_t tr = blockIdx.y; tr < tile_rows; tr += gridDim.y) {  // uniform in the block
    const int64_t row = tr * kTile + ty;
    float acc = 0.0f;
    for (int64_t k0 = 0; k0 < k; k0 += kTile) {
      as[ty][tx] = row < m && k0 + tx < k ? __bfloat162float(a[row * k + k0 + tx]) : 0.0f;
      bs[ty][tx] = k0 + ty < k && col < nl ? __bfloat162float(b[(k0 + ty) * nl + col]) : 0.0f;
      __syncthreads();
      for (int kk = 0; kk < kTile; ++kk) acc += as[ty][kk] * bs[kk][tx];
      __syncthreads();  // the tiles are read before the next step overwrites them
    }
    if (row < m && col < nl) c[row * ldc + col0 + col] = __float2bfloat16_rn(acc);
  }
}

// Every element of c outside our own block, from the c of the rank whose block it is:
// column j of a row belongs to rank j / nl.
__global__ void gather_kernel(kf::Peers<const __nv_bfloat16> c_of, __nv_bfloat16* c, int64_t m,
                              int64_t nl, int world, int rank) {
  const int64_t n = nl * world;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < m * n;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int s = static_cast<int>(e % n / nl);
    if (s != rank) c[e] = c_of[s][e];
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  g_sig = kf::make_signals(comm, 2);
  return g_sig.local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& a = t["a"];
  const kf::Tensor& b = t["b"];
  kf::Tensor& c = t["c"];
  const int64_t m = a.shape[0], k = a.shape[1], nl = b.shape[1], n = nl * comm.world;
  const uint32_t epoch = kf::next_epoch();
  // No barrier first: only we write our block of c, and no peer reads it before slot 0.
  const int64_t tile_rows = (m + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>((nl + kTile - 1) / kTile),
                  static_cast<unsigned>(tile_rows < 65535 ? tile_rows : 65535));
  matmul_kernel<<<grid, dim3(kTile, kTile), 0, comm.stream()>>>(
      a.ptr<const __nv_bfloat16>(), b.ptr<const __nv_bfloat16>(), c.ptr<__nv_bfloat16>(), m, k, nl,
      n, comm.rank * nl);
  kf::launch_barrier(g_sig, 0, epoch, comm.stream());
  gather_kernel<<<blocks_for(m * n), 256, 0, comm.stream()>>>(
      kf::peers(comm, static_cast<const __nv_bfloat16*>(c.ptr<__nv_bfloat16>())),
      c.ptr<__nv_bfloat16>(), m, nl, comm.world, comm.rank);
  kf::launch_barrier(g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
