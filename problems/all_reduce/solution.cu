// all_reduce, expert kernel on kf/: y = sum over ranks of x (fp32 or bf16, summed in fp32).
//
// Small messages: one-shot. Every rank reads every peer's whole x and sums in rank
// order (the same bits on every rank); two barriers, the latency floor.
// Large messages: two-shot. Rank r owns part r of the vector: it reads part r of every
// peer's x, sums, and pushes the sum into part r of every rank's y (the reduce-scatter
// and the all-gather halves in one pass, so still only two barriers). Each rank moves
// 2(w-1)/w of the data instead of (w-1). kf::allreduce_one_shot picks (vLLM's rule).
#include <kf/kf.cuh>

// Knobs (kforge's template search sets them with #defines in front; the defaults are
// the expert kernel as shipped).
#ifndef KF_ALGO
#define KF_ALGO automatic  // automatic (vLLM's rule) | one_shot | two_shot
#endif
#ifndef KF_BLOCKS
#define KF_BLOCKS 32  // grid maximum
#endif
#ifndef KF_THREADS
#define KF_THREADS 512  // threads per block
#endif

namespace all_reduce {

enum class algo { automatic, one_shot, two_shot };

struct config {
  static constexpr algo kAlgo = algo::KF_ALGO;
  static constexpr int kThreads = KF_THREADS;
  static constexpr int kMaxBlocks = KF_BLOCKS;  // one barrier slot per block and phase
  static constexpr int kStart = 0;              // slots [0, kMaxBlocks): entry barrier
  static constexpr int kEnd = kMaxBlocks;       // slots [kMaxBlocks, 2 kMaxBlocks): exit
  static constexpr int kSlots = 2 * kMaxBlocks;
};

template <class T>
struct globals {
  kf::SignalSet sig;
  kf::Peers<const T> x;  // x[s]: rank s's input
  kf::Peers<T> y;        // y[k]: rank (rank + k) % world's output (y[0] is ours)
  int64_t n;
  uint32_t epoch;
  bool vec;  // every x and y starts on 16 bytes
};

template <class T>
__global__ void __launch_bounds__(config::kThreads) one_shot(const __grid_constant__ globals<T> g) {
  kf::barrier(g.sig, config::kStart + blockIdx.x, g.epoch);  // peers entered: their x is ready
  kf::reduce<T>(g.y[0], g.x, g.sig.world, 0, g.n, g.vec, kf::grid_tid(), kf::grid_threads());
  kf::barrier(g.sig, config::kEnd + blockIdx.x, g.epoch);  // peers stopped reading our x
}

template <class T>
__global__ void __launch_bounds__(config::kThreads) two_shot(const __grid_constant__ globals<T> g) {
  kf::barrier(g.sig, config::kStart + blockIdx.x, g.epoch);  // peers' x ready, y writable
  const kf::Range part = kf::split(g.n, g.sig.world, g.sig.rank, kf::Elem<T>::kPerVec);
  kf::reduce_push<T>(g.y, g.sig.world, part.begin, g.x, g.sig.world, part.begin, part.size(), g.vec,
                     kf::grid_tid(), kf::grid_threads());
  kf::barrier(g.sig, config::kEnd + blockIdx.x, g.epoch);  // every part of our y has arrived
}

static kf::SignalSet g_sig;

template <class T>
int entrypoint(kf::Comm& comm, const kf::Tensor& X, const kf::Tensor& Y) {
  globals<T> g{};
  g.sig = g_sig;
  g.x = kf::peers(comm, X.ptr<const T>());
  for (int k = 0; k < comm.world; ++k)
    g.y.ptr[k] = comm.peer(Y.ptr<T>(), (comm.rank + k) % comm.world);
  g.n = X.numel;
  g.epoch = kf::next_epoch();
  g.vec = kf::all_aligned16(g.x, g.y, comm.world);
  const bool one = config::kAlgo == algo::automatic ? kf::allreduce_one_shot(X.bytes(), comm.world)
                                                    : config::kAlgo == algo::one_shot;
  const int64_t work = (one ? g.n : kf::ceil_div(g.n, comm.world)) / kf::Elem<T>::kPerVec;
  const int blocks = kf::grid_for(work, config::kThreads, config::kMaxBlocks);
  if (one)
    one_shot<T><<<blocks, config::kThreads, 0, comm.stream()>>>(g);
  else
    two_shot<T><<<blocks, config::kThreads, 0, comm.stream()>>>(g);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

}  // namespace all_reduce

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& /*t*/) {
  all_reduce::g_sig = kf::make_signals(comm, all_reduce::config::kSlots);
  return all_reduce::g_sig.local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  const kf::Tensor& y = t["y"];
  if (x.dtype == kf::DType::bf16) return all_reduce::entrypoint<__nv_bfloat16>(comm, x, y);
  return all_reduce::entrypoint<float>(comm, x, y);
}
