// A simple correct UVA candidate for ulysses_all_to_all, fused push: no staging buffer
// and no separate cat. A barrier kernel (every peer has entered this call, so its y
// may be written), one kernel in which rank r stores every element of its x straight
// into its place in the owner's y (row p*R + i of x is row i of rank p's y, at columns
// r*N ..), and a second barrier (every peer's stores into our y have landed).
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

// x is [world * rows, n]; element (p*rows + i, j) goes to y(p)[i][rank*n + j], y(p)
// being rank p's [rows, world * n]. One grid-stride pass over x, 2-byte stores (the
// rows need not be aligned to more).
__global__ void push_kernel(const uint16_t* x, kf::Peers<uint16_t> y, int64_t rows, int64_t n,
                            int rank, int world) {
  const int64_t total = rows * world * n, width = n * world;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = e / n, j = e % n;
    const int p = static_cast<int>(row / rows);
    const int64_t i = row % rows;
    y[p][i * width + rank * n + j] = x[e];
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  g_sig = kf::make_signals(comm, 2);
  return g_sig.local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const int64_t rows = x.shape[0] / comm.world, n = x.shape[1];
  const uint32_t epoch = kf::next_epoch();
  kf::launch_barrier(g_sig, 0, epoch, comm.stream());
  push_kernel<<<blocks_for(x.numel), 256, 0, comm.stream()>>>(
      x.ptr<const uint16_t>(), kf::peers(comm, y.ptr<uint16_t>()), rows, n, comm.rank, comm.world);
  kf::launch_barrier(g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
