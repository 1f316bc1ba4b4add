// broadcast, expert kernel on kf/: y(every rank) = x(root).
//
// Small messages: every rank pulls the root's whole x (one barrier-to-barrier read).
// Large messages: relay. Rank p reads part p of the root's x once and pushes it into
// part p of every rank's y. The root's link then carries (w-1)/w of x out to the
// pullers plus its own part's pushes, about 2(w-1)/w x instead of (w-1) x when every
// rank pulls everything from it; each byte crosses two links, so this pays only when
// the root's link, not latency, is the limit (world > 2, large n).
#include <kf/kf.cuh>

// Knobs (kforge's template search sets them with #defines in front; the defaults are
// the expert kernel as shipped).
#ifndef KF_ALGO
#define KF_ALGO automatic  // automatic (relay from 1 MiB at world > 2) | pull | relay
#endif
#ifndef KF_BLOCKS
#define KF_BLOCKS 32  // grid maximum
#endif
#ifndef KF_THREADS
#define KF_THREADS 512  // threads per block
#endif

namespace broadcast {

enum class algo { automatic, pull, relay };

struct config {
  static constexpr algo kAlgo = algo::KF_ALGO;
  static constexpr int kThreads = KF_THREADS;
  static constexpr int kMaxBlocks = KF_BLOCKS;
  static constexpr int kStart = 0;
  static constexpr int kEnd = kMaxBlocks;
  static constexpr int kSlots = 2 * kMaxBlocks;
  static constexpr size_t kRelayBytes = 1u << 20;  // relay from 1 MiB up (world > 2)
};

struct globals {
  kf::SignalSet sig;
  const float* src;    // the root's x
  kf::Peers<float> y;  // y[k]: rank (rank + k) % world's output (y[0] is ours)
  int64_t n;
  uint32_t epoch;
  bool relay;
  bool vec;  // the root's x and every y start on 16 bytes
};

__global__ void __launch_bounds__(config::kThreads) kernel(const __grid_constant__ globals g) {
  kf::barrier(g.sig, config::kStart + blockIdx.x, g.epoch);  // the root's x is ready
  if (g.relay) {
    const kf::Range part = kf::split(g.n, g.sig.world, g.sig.rank, 4);
    kf::copy_push(g.y, g.sig.world, part.begin, g.src + part.begin, part.size(), g.vec,
                  kf::grid_tid(), kf::grid_threads());
  } else {
    kf::copy(g.y[0], g.src, g.n, kf::grid_tid(), kf::grid_threads());
  }
  kf::barrier(g.sig, config::kEnd + blockIdx.x, g.epoch);  // all reads of x, all pushes done
}

static kf::SignalSet g_sig;

}  // namespace broadcast

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& /*t*/) {
  broadcast::g_sig = kf::make_signals(comm, broadcast::config::kSlots);
  return broadcast::g_sig.local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  using namespace broadcast;
  const kf::Tensor& x = t["x"];
  const int root = static_cast<int>(t.iparam("root", 0));
  globals g{};
  g.sig = g_sig;
  g.src = comm.peer(x.ptr<const float>(), root);
  for (int k = 0; k < comm.world; ++k)
    g.y.ptr[k] = comm.peer(t["y"].ptr<float>(), (comm.rank + k) % comm.world);
  g.n = x.numel;
  g.epoch = kf::next_epoch();
  g.relay = config::kAlgo == algo::automatic ? comm.world > 2 && x.bytes() >= config::kRelayBytes
                                             : config::kAlgo == algo::relay;
  g.vec = kf::aligned16(g.src);
  for (int k = 0; k < comm.world; ++k) g.vec = g.vec && kf::aligned16(g.y[k]);
  const int64_t work = (g.relay ? kf::ceil_div(g.n, comm.world) : g.n) / 4;
  const int blocks = kf::grid_for(work, config::kThreads, config::kMaxBlocks);
  kernel<<<blocks, config::kThreads, 0, comm.stream()>>>(g);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
