// embedding_lookup on the host backend, with the knobs of kforge's template search: y(rank
// r) holds the rows its indices name, grouped by owner rank (a stable counting sort by
// owner; problem.json has the contract). No index all-to-all is needed: whoever moves a
// row can compute its position from the indices themselves.
// pull: rank r computes the positions of its own indices, and after a barrier (every
// table is ready) copies each row from its owner's table into its y.
// push: after a barrier (every rank's indices are ready and every y is ready for this
// call), owner r reads every rank s's indices, finds those it owns and their positions in
// s's y, and writes its rows there. A final barrier either way: pull, our table stays
// until read; push, every row of our y has arrived and our indices are no longer read.
#include <kf/host.h>
#include <kf/kf.h>

#include <cstdint>
#include <cstring>
#include <vector>

// Knobs (kforge's template search sets them with #defines in front): who moves the rows
// (pull: the rank that looked them up; push: their owner) and how many elements one copy
// step moves. Every value is correct; they change the access pattern.
#ifndef KF_ALGO
#define KF_ALGO pull  // pull | push
#endif
#ifndef KF_CHUNK_ELEMS
#define KF_CHUNK_ELEMS 65536
#endif

namespace {

enum class algo { pull, push };
constexpr algo kAlgo = algo::KF_ALGO;
constexpr size_t kChunk = KF_CHUNK_ELEMS;
static_assert(kChunk > 0, "KF_CHUNK_ELEMS must be positive");

kf::host::Barrier g_sync;  // see <kf/host.h>
using kf::host::chunked_copy;

struct Shape {
  int64_t n, rows, dim;
  size_t row_bytes() const { return static_cast<size_t>(dim) * sizeof(uint16_t); }
};

// Pull: every index of ours, from its owner's table to its place in our y.
void pull(const kf::Comm& comm, const int64_t* idx, const uint16_t* table, uint16_t* y,
          const Shape& s) {
  std::vector<int64_t> next(static_cast<size_t>(comm.world) + 1, 0);
  for (int64_t i = 0; i < s.n; ++i) ++next[static_cast<size_t>(idx[i] / s.rows) + 1];
  for (int r = 1; r <= comm.world; ++r) next[r] += next[r - 1];  // first slot of each owner
  std::vector<int64_t> pos(static_cast<size_t>(s.n));
  for (int64_t i = 0; i < s.n; ++i) pos[i] = next[static_cast<size_t>(idx[i] / s.rows)]++;
  g_sync.wait(comm);  // every rank's table is ready
  for (int64_t i = 0; i < s.n; ++i) {
    const int owner = static_cast<int>(idx[i] / s.rows);
    const uint16_t* src = comm.peer(table, owner) + (idx[i] % s.rows) * s.dim;
    chunked_copy(reinterpret_cast<char*>(y + pos[i] * s.dim), reinterpret_cast<const char*>(src),
                 s.row_bytes(), kChunk * sizeof(uint16_t));
  }
}

// Push: for every rank d (peers first, starting after us), the rows of d's indices that
// we own, into d's y after the rows of the owners before us.
void push(const kf::Comm& comm, const int64_t* idx, const uint16_t* table, uint16_t* y,
          const Shape& s) {
  g_sync.wait(comm);  // every rank's indices are ready, and its y is ours to write
  const int64_t lo = comm.rank * s.rows, hi = lo + s.rows;  // the global rows we own
  for (int k = 1; k <= comm.world; ++k) {
    const int d = (comm.rank + k) % comm.world;
    const int64_t* their = comm.peer(idx, d);
    int64_t at = 0;  // d's indices owned by lower ranks come first
    for (int64_t i = 0; i < s.n; ++i) at += their[i] < lo;
    uint16_t* dst = comm.peer(y, d);
    for (int64_t i = 0; i < s.n; ++i)
      if (their[i] >= lo && their[i] < hi)
        chunked_copy(reinterpret_cast<char*>(dst + at++ * s.dim),
                     reinterpret_cast<const char*>(table + (their[i] - lo) * s.dim), s.row_bytes(),
                     kChunk * sizeof(uint16_t));
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  return g_sync.setup(comm) ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& table = t["table"];
  const Shape s{t["indices"].numel, table.shape[0], table.shape[1]};
  const int64_t* idx = t["indices"].ptr<const int64_t>();
  if (kAlgo == algo::pull)
    pull(comm, idx, table.ptr<const uint16_t>(), t["y"].ptr<uint16_t>(), s);
  else
    push(comm, idx, table.ptr<const uint16_t>(), t["y"].ptr<uint16_t>(), s);
  g_sync.wait(comm);  // pull: nobody still reads our table; push: our y is complete
  return 0;
}
