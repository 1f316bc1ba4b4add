// all_gather, expert kernel on kf/: y(every rank)[s*n : (s+1)*n] = x(rank s).
//
// Push with TMA (when every destination is 16-byte aligned, i.e. n % 4 == 0): one thread
// per block loads a 16 KB tile of our x into shared memory (cp.async.bulk + mbarrier)
// and stores it into chunk `rank` of every rank's y with one bulk store per rank, two
// tiles in flight. TMA needs ~15 SMs to fill NVLink (PK) and no registers; one load
// feeds world stores. Otherwise (odd n) and for the tail: 16-byte register stores
// (kf::copy_push), scalar where misaligned. Barriers: entry (peers' y is writable) and
// exit (every peer's pushes into our y have landed).
#include <kf/kf.cuh>

// Knobs (kforge's template search sets them with #defines in front; the defaults are
// the expert kernel as shipped).
#ifndef KF_MECH
#define KF_MECH tma  // tma (register tail) | reg (register stores only)
#endif
#ifndef KF_BLOCKS
#define KF_BLOCKS 16  // grid maximum
#endif
#ifndef KF_THREADS
#define KF_THREADS 256  // threads per block (the register part)
#endif
#ifndef KF_CHUNK_BYTES
#define KF_CHUNK_BYTES 16384  // TMA tile; two in static shared memory, a multiple of 16
#endif

namespace all_gather {

enum class mech { tma, reg };

struct config {
  static constexpr mech kMech = mech::KF_MECH;
  static constexpr int kThreads = KF_THREADS;
  static constexpr int kMaxBlocks = KF_BLOCKS;
  static constexpr int kStart = 0;
  static constexpr int kEnd = kMaxBlocks;
  static constexpr int kSlots = 2 * kMaxBlocks;
  static constexpr int kTileBytes = KF_CHUNK_BYTES;
  static_assert(kTileBytes % 16 == 0 && 2 * kTileBytes <= 40960,
                "KF_CHUNK_BYTES: a multiple of 16, at most 20 KB");
  static constexpr int kTile = kTileBytes / 4;  // floats per tile
};

struct globals {
  kf::SignalSet sig;
  const float* x;      // our input (n)
  kf::Peers<float> y;  // y[k]: rank (rank + k) % world's output (world * n); y[0] ours
  int64_t n;
  uint32_t epoch;
  bool tma;  // x and every y + rank*n on 16 bytes
};

__global__ void __launch_bounds__(config::kThreads) kernel(const __grid_constant__ globals g) {
  __shared__ alignas(128) float buf[2][config::kTile];
  __shared__ uint64_t bar[2];
  const int w = g.sig.world;
  const int64_t off = g.sig.rank * g.n;  // our chunk in every y
  kf::barrier(g.sig, config::kStart + blockIdx.x, g.epoch);
  const int64_t tiles = g.tma ? g.n / config::kTile : 0;
  if (threadIdx.x == 0 && tiles > 0) {
    kf::mbar_init(&bar[0], 1);
    kf::mbar_init(&bar[1], 1);
    int k = 0;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x, ++k) {
      const int b = k & 1;
      kf::tma_wait_read<1>();  // the stores of tile k-2 have read buf[b]
      kf::mbar_arrive_expect_tx(&bar[b], config::kTileBytes);
      kf::tma_load(buf[b], g.x + t * config::kTile, config::kTileBytes, &bar[b]);
      kf::mbar_wait(&bar[b], (k >> 1) & 1);
      for (int d = 0; d < w; ++d)
        kf::tma_store(g.y[d] + off + t * config::kTile, buf[b], config::kTileBytes);
      kf::tma_commit();
    }
    kf::tma_flush_for_peers();  // every store landed before the exit barrier signals
  }
  const int64_t done = tiles * config::kTile;  // the tail (or everything) by registers
  kf::copy_push(g.y, w, off + done, g.x + done, g.n - done, g.tma, kf::grid_tid(),
                kf::grid_threads());
  kf::barrier(g.sig, config::kEnd + blockIdx.x, g.epoch);
}

static kf::SignalSet g_sig;

}  // namespace all_gather

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& /*t*/) {
  all_gather::g_sig = kf::make_signals(comm, all_gather::config::kSlots);
  return all_gather::g_sig.local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  using namespace all_gather;
  const kf::Tensor& x = t["x"];
  globals g{};
  g.sig = g_sig;
  g.x = x.ptr<const float>();
  for (int k = 0; k < comm.world; ++k)
    g.y.ptr[k] = comm.peer(t["y"].ptr<float>(), (comm.rank + k) % comm.world);
  g.n = x.numel;
  g.epoch = kf::next_epoch();
  // Every rank must launch the same grid: the barriers pair block b with block b of each
  // peer. So the TMA decision may not depend on this rank's chunk offset (rank * n):
  // TMA needs every rank's chunk on 16 bytes, i.e. n % 4 == 0 (the heaps are symmetric).
  g.tma = config::kMech == mech::tma && g.n % 4 == 0 && kf::aligned16(g.x);
  for (int k = 0; k < comm.world; ++k) g.tma = g.tma && kf::aligned16(g.y[k]);
  const int64_t tiles = g.tma ? g.n / config::kTile : 0;
  const int blocks = tiles > 0 ? static_cast<int>(kf::min64(tiles, config::kMaxBlocks))
                               : kf::grid_for(g.n / 4, config::kThreads, config::kMaxBlocks);
  kernel<<<blocks, config::kThreads, 0, comm.stream()>>>(g);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
