// gnn_feature_exchange, expert kernel on kf/: out(r) chunk k row i = features(s)[ids(s)[j *
// rows + i]], s = (r + k) mod world the sender, j = (world - k) mod world its chunk. The
// gather and the all-to-all in one pass: whoever moves a row reads it straight from the
// features row its id names, so the gathered block the reference writes, then sends, never
// exists (one read and one write of each row instead of two of each, and one launch).
//
// push (default): rank s stores its chunk j into chunk (world - j) mod world of rank
// (s + j) mod world. Its ids and features are local, and the stores are posted: no link
// round trip at all. pull: rank r reads each out row from its sender, the id and then the
// row it names: two dependent round trips, for comparison. Rows are hidden % 8 == 0 bf16,
// so each is a whole number of 16-byte vectors on 16 bytes: a thread moves one vector.
// Every rank starts with chunk 1 (the next rank) and does its own chunk 0 last.
// Entry barrier: a peer has entered this call (push: its out is poisoned already and ours
// may land; pull: its features and ids are this call's). Exit barrier: push, every chunk
// of our out has arrived; pull, no peer still reads our inputs. Per-block slots with the
// call's epoch: no flag is ever reset. World 1 has no peer: no barrier, one gather kernel.
#include <kf/kf.cuh>

// Knobs (kforge's template search sets them with #defines in front; the defaults are
// the expert kernel as shipped).
#ifndef KF_ALGO
#define KF_ALGO push  // push | pull
#endif
#ifndef KF_BLOCKS
#define KF_BLOCKS 32  // grid maximum
#endif
#ifndef KF_THREADS
#define KF_THREADS 512  // threads per block
#endif

namespace gnn_fx {

enum class algo { push, pull };

struct config {
  static constexpr algo kAlgo = algo::KF_ALGO;
  static constexpr int kThreads = KF_THREADS;
  static constexpr int kMaxBlocks = KF_BLOCKS;
  static constexpr int kStart = 0;  // slots [0, kMaxBlocks): entry barrier
  static constexpr int kEnd = kMaxBlocks;
  static constexpr int kSlots = 2 * kMaxBlocks;
};

struct globals {
  kf::SignalSet sig;
  kf::Peers<const uint4> features;  // features[s]: rank s's [world * rows, vecs]
  kf::Peers<const int64_t> ids;     // ids[s]: rank s's [world * rows]
  kf::Peers<uint4> out;             // out[d]: rank d's [world * rows, vecs]
  int64_t rows;                     // rows per chunk
  int64_t vecs;                     // 16-byte vectors per row (hidden / 8)
  uint32_t epoch;
};

__global__ void __launch_bounds__(config::kThreads) kernel(const __grid_constant__ globals g) {
  const int r = g.sig.rank, w = g.sig.world;
  if (w > 1) kf::barrier(g.sig, config::kStart + blockIdx.x, g.epoch);
  const int64_t total_rows = w * g.rows, total = total_rows * g.vecs;
  for (int64_t e = kf::grid_tid(); e < total; e += kf::grid_threads()) {
    // Row q in an order that starts at chunk 1 and ends at chunk 0.
    const int64_t q = (e / g.vecs + g.rows) % total_rows, v = e % g.vecs;
    const int c = static_cast<int>(q / g.rows);  // push: our chunk j; pull: our out chunk k
    const int64_t i = q % g.rows;
    const int peer = (r + c) % w;       // push: the receiver; pull: the sender
    const int64_t other = (w - c) % w;  // push: its out chunk; pull: its gathered chunk
    if (config::kAlgo == algo::pull) {
      const int64_t id = g.ids[peer][other * g.rows + i];
      kf::st16(g.out[r] + q * g.vecs + v, kf::ld16_stream(g.features[peer] + id * g.vecs + v));
    } else {
      const int64_t id = g.ids[r][q];
      kf::st16(g.out[peer] + (other * g.rows + i) * g.vecs + v,
               kf::ld16(g.features[r] + id * g.vecs + v));
    }
  }
  if (w > 1) kf::barrier(g.sig, config::kEnd + blockIdx.x, g.epoch);
}

static kf::SignalSet g_sig;

}  // namespace gnn_fx

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& /*t*/) {
  gnn_fx::g_sig = kf::make_signals(comm, gnn_fx::config::kSlots);
  return gnn_fx::g_sig.local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  using namespace gnn_fx;
  const kf::Tensor& features = t["features"];
  globals g{};
  g.sig = g_sig;
  g.features = kf::peers(comm, features.ptr<const uint4>());
  g.ids = kf::peers(comm, t["ids"].ptr<const int64_t>());
  g.out = kf::peers(comm, t["out"].ptr<uint4>());
  g.rows = features.shape[0] / comm.world;
  g.vecs = features.shape[1] / 8;
  g.epoch = kf::next_epoch();
  const int blocks = kf::grid_for(features.shape[0] * g.vecs, config::kThreads, config::kMaxBlocks);
  kernel<<<blocks, config::kThreads, 0, comm.stream()>>>(g);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
