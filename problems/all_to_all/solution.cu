// all_to_all, expert kernel on kf/: y(rank r)[s*n + i] = x(rank s)[r*n + i].
//
// Push: rank r stores chunk d of its x into chunk r of rank d's y, for every d. Remote
// stores are posted (no round trip per load, unlike pulling), and each rank starts with
// a different destination (d = r+1, r+2, ...) so that no rank's link is hit by everyone
// at once. Entry barrier: the peer's y is ready to be written (its call has started, so
// its poisoned outputs are in place). Exit barrier: every peer's stores into our y have
// landed.
#include <kf/kf.cuh>

// Knobs (kforge's template search sets them with #defines in front; the defaults are
// the expert kernel as shipped).
#ifndef KF_ALGO
#define KF_ALGO push  // push | pull (rank r reads chunk r of every x into chunk s of its y)
#endif
#ifndef KF_BLOCKS
#define KF_BLOCKS 32  // grid maximum
#endif
#ifndef KF_THREADS
#define KF_THREADS 512  // threads per block
#endif

namespace all_to_all {

enum class algo { push, pull };

struct config {
  static constexpr algo kAlgo = algo::KF_ALGO;
  static constexpr int kThreads = KF_THREADS;
  static constexpr int kMaxBlocks = KF_BLOCKS;
  static constexpr int kStart = 0;
  static constexpr int kEnd = kMaxBlocks;
  static constexpr int kSlots = 2 * kMaxBlocks;
};

struct globals {
  kf::SignalSet sig;
  const float* x;             // our input (world * n)
  kf::Peers<const float> xs;  // xs[s]: rank s's input (pull)
  kf::Peers<float> y;         // y[d]: rank d's output (world * n)
  int64_t n;
  uint32_t epoch;
};

__global__ void __launch_bounds__(config::kThreads) kernel(const __grid_constant__ globals g) {
  kf::barrier(g.sig, config::kStart + blockIdx.x, g.epoch);
  const int r = g.sig.rank, w = g.sig.world;
  for (int k = 1; k <= w; ++k) {  // ours last: local copies need no link
    const int d = (r + k) % w;
    if (config::kAlgo == algo::pull)  // chunk r of rank d's x into chunk d of our y
      kf::copy(g.y[r] + d * g.n, g.xs[d] + r * g.n, g.n, kf::grid_tid(), kf::grid_threads());
    else
      kf::copy(g.y[d] + r * g.n, g.x + d * g.n, g.n, kf::grid_tid(), kf::grid_threads());
  }
  kf::barrier(g.sig, config::kEnd + blockIdx.x, g.epoch);
}

static kf::SignalSet g_sig;

}  // namespace all_to_all

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& /*t*/) {
  all_to_all::g_sig = kf::make_signals(comm, all_to_all::config::kSlots);
  return all_to_all::g_sig.local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  using namespace all_to_all;
  globals g{};
  g.sig = g_sig;
  g.x = t["x"].ptr<const float>();
  g.xs = kf::peers(comm, g.x);
  g.y = kf::peers(comm, t["y"].ptr<float>());
  g.n = t.iparam("n", t["y"].numel / comm.world);
  g.epoch = kf::next_epoch();
  const int blocks = kf::grid_for(g.n * comm.world / 4, config::kThreads, config::kMaxBlocks);
  kernel<<<blocks, config::kThreads, 0, comm.stream()>>>(g);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
