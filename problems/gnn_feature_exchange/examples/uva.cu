// A simple correct UVA candidate for gnn_feature_exchange, pull style: a barrier kernel
// (every rank has entered the call, so every peer's features and ids hold this call's
// values), then one kernel that fills out chunk k from the sender s = (rank + k) mod
// world, reading s's ids and feature rows through its peer pointers (row i of the chunk is
// s's row ids(s)[j * rows + i], j = (world - k) mod world); a second barrier keeps our
// inputs in place until every peer has read them.
#include <cstdint>
#include <kf/kf.cuh>

namespace {

// kf's one-block barrier kernel (<kf/signal.cuh>): slot 0 before the pull, slot 1 at the
// end, with one epoch per call, so its words never need a reset.
kf::SignalSet g_sig;

int blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<int>(b < 4096 ? (b < 1 ? 1 : b) : 4096);
}

// One grid-stride pass over out, 16 bytes (8 bf16 values) a thread: vector v of out row
// q = k * rows + i comes from the sender's feature row named by its ids.
__global__ void exchange_kernel(kf::Peers<const uint4> features, kf::Peers<const int64_t> ids,
                                uint4* out, int64_t rows, int64_t vecs, int rank, int world) {
  const int64_t total = world * rows * vecs;
  for (int64_t x = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; x < total;
       x += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t q = x / vecs, k = q / rows, i = q % rows;
    const int s = static_cast<int>((rank + k) % world);
    const int64_t j = (world - k) % world;
    const int64_t row = ids[s][j * rows + i];
    out[x] = features[s][row * vecs + x % vecs];
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  g_sig = kf::make_signals(comm, 2);
  return g_sig.local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& features = t["features"];
  const int64_t rows = features.shape[0] / comm.world, vecs = features.shape[1] / 8;
  const uint32_t epoch = kf::next_epoch();
  cudaStream_t st = comm.stream();
  kf::launch_barrier(g_sig, 0, epoch, st);
  exchange_kernel<<<blocks_for(features.shape[0] * vecs), 256, 0, st>>>(
      kf::peers(comm, features.ptr<const uint4>()), kf::peers(comm, t["ids"].ptr<const int64_t>()),
      t["out"].ptr<uint4>(), rows, vecs, comm.rank, comm.world);
  kf::launch_barrier(g_sig, 1, epoch, st);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
