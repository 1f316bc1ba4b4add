// Fault (problem ulysses_all_to_all): problems/ulysses_all_to_all/examples/uva.cu with one
// planted bug: the push kernel is launched with one thread per element and no grid-stride
// loop, but its grid is sized with a floor division (M * N / 256 blocks), so the last
// M * N % 256 elements of x are never sent. At the small size (M = 56, N = 203) that is the
// last 104 elements of x's last row, at every world size: on the last rank, the last 104
// columns of each segment of y's last row keep their poison.
// Verdict: mismatch on y wherever 256 does not divide M * N (the small size at any world).
#include <cstdint>
#include <kf/kf.cuh>

namespace {

// Slot 0 on entry and slot 1 on exit, one epoch per call.
kf::SignalSet g_sig;

__global__ void push_kernel(const uint16_t* x, kf::Peers<uint16_t> y, int64_t rows, int64_t n,
                            int rank, int world) {
  const int64_t total = rows * world * n, width = n * world;
  const int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (e >= total) return;
  const int64_t row = e / n, j = e % n;
  const int p = static_cast<int>(row / rows);
  y[p][row % rows * width + rank * n + j] = x[e];
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
  const int blocks = static_cast<int>(x.numel / 256);  // the bug: the tail's block is missing
  kf::launch_barrier(g_sig, 0, epoch, comm.stream());
  if (blocks > 0)
    push_kernel<<<blocks, 256, 0, comm.stream()>>>(x.ptr<const uint16_t>(),
                                                   kf::peers(comm, y.ptr<uint16_t>()), rows, n,
                                                   comm.rank, comm.world);
  kf::launch_barrier(g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
