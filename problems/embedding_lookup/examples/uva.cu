// A simple correct UVA candidate for embedding_lookup, pull style: a barrier kernel (every
// rank has entered the call, so every peer's table holds this call's values), then one
// kernel in which a warp per index counts where its row goes in y (the indices of lower
// owner ranks, then this owner's earlier ones) and copies the row there straight from
// the owner's table through its peer pointer; a second barrier keeps our table in place
// until every peer has read it.
#include <cstdint>
#include <kf/kf.cuh>

namespace {

// kf's one-block barrier kernel (<kf/signal.cuh>): slot 0 before the pull, slot 1 at the
// end, with one epoch per call, so its words never need a reset.
kf::SignalSet g_sig;

constexpr int kThreads = 256;  // 8 warps a block, one index per warp at a time

int blocks_for(int64_t warps) {
  const int64_t b = (warps * 32 + kThreads - 1) / kThreads;
  return static_cast<int>(b < 4096 ? (b < 1 ? 1 : b) : 4096);
}

// Row i of the lookup goes to y row p(i) = #{j : o(j) < o(i)} + #{j < i : o(j) = o(i)},
// o = index / rows. Each warp counts p(i) over all n indices (n is about a thousand, so
// the quadratic count is cheap next to the row copies), then copies the row, 16 bytes a
// lane at a time.
__global__ void lookup_kernel(const int64_t* idx, kf::Peers<const uint4> table, uint4* y, int64_t n,
                              int64_t rows, int64_t vecs) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  for (int64_t i = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / 32; i < n;
       i += warps) {
    const int64_t v = idx[i], owner = v / rows;
    int64_t before = 0;
    for (int64_t j = lane; j < n; j += 32) {
      const int64_t oj = idx[j] / rows;
      before += oj < owner || (oj == owner && j < i);
    }
    for (int off = 16; off > 0; off /= 2) before += __shfl_xor_sync(0xffffffffu, before, off);
    const uint4* src = table[static_cast<int>(owner)] + (v - owner * rows) * vecs;
    uint4* dst = y + before * vecs;
    for (int64_t k = lane; k < vecs; k += 32) dst[k] = src[k];
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  g_sig = kf::make_signals(comm, 2);
  return g_sig.local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& indices = t["indices"];
  const kf::Tensor& table = t["table"];
  const int64_t n = indices.numel, rows = table.shape[0], vecs = table.shape[1] / 8;
  const uint32_t epoch = kf::next_epoch();
  cudaStream_t st = comm.stream();
  kf::launch_barrier(g_sig, 0, epoch, st);
  lookup_kernel<<<blocks_for(n), kThreads, 0, st>>>(indices.ptr<const int64_t>(),
                                                    kf::peers(comm, table.ptr<const uint4>()),
                                                    t["y"].ptr<uint4>(), n, rows, vecs);
  kf::launch_barrier(g_sig, 1, epoch, st);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
