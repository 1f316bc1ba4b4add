// embedding_lookup on the host backend: the baseline's semantics in plain C++ over the
// symmetric heap, in the reference's three exchanges. Each rank groups its indices by
// owner rank into a heap scratch with their counts; after a barrier, each owner gathers
// the indices addressed to it from every rank (the index all-to-all), looks the rows up
// in its table into a second scratch, ordered by source rank; after a second barrier,
// each rank pulls its rows back from every owner into y (the row all-to-all), owner by
// owner; a third barrier keeps the scratch unwritten until every peer has read it.
#include <kf/host.h>
#include <kf/kf.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

kf::host::Barrier g_sync;         // see <kf/host.h>
int64_t* g_counts = nullptr;      // [world]: how many of our indices each rank owns
int64_t* g_send = nullptr;        // [n]: our indices, grouped by owner (stable)
uint16_t* g_retrieved = nullptr;  // [world * n, dim]: rows we looked up, by source rank

// Our indices grouped by owner into g_send, the counts into g_counts.
void group(const int64_t* idx, int64_t n, int64_t rows, int world) {
  std::vector<int64_t> next(static_cast<size_t>(world), 0);
  for (int64_t i = 0; i < n; ++i) ++next[static_cast<size_t>(idx[i] / rows)];
  int64_t start = 0;
  for (int r = 0; r < world; ++r) {
    g_counts[r] = next[static_cast<size_t>(r)];
    next[static_cast<size_t>(r)] = start;
    start += g_counts[r];
  }
  for (int64_t i = 0; i < n; ++i) g_send[next[static_cast<size_t>(idx[i] / rows)]++] = idx[i];
}

// The first of rank s's grouped indices that rank d owns.
int64_t offset(const kf::Comm& comm, int s, int d) {
  const int64_t* counts = comm.peer(g_counts, s);
  int64_t off = 0;
  for (int r = 0; r < d; ++r) off += counts[r];
  return off;
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const size_t n = static_cast<size_t>(t["indices"].numel), dim = t["table"].shape[1];
  const bool synced = g_sync.setup(comm);
  g_counts = comm.alloc_array<int64_t>(static_cast<size_t>(comm.world));
  g_send = comm.alloc_array<int64_t>(n);
  g_retrieved = comm.alloc_array<uint16_t>(static_cast<size_t>(comm.world) * n * dim);
  return synced && g_counts && g_send && g_retrieved ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& table = t["table"];
  const int64_t n = t["indices"].numel, rows = table.shape[0], dim = table.shape[1];
  const size_t row_bytes = static_cast<size_t>(dim) * sizeof(uint16_t);
  group(t["indices"].ptr<const int64_t>(), n, rows, comm.world);
  g_sync.wait(comm);  // every rank's grouped indices and counts are in its scratch
  // The index all-to-all and the lookup: the rows our peers asked for, by source rank.
  int64_t k = 0;
  for (int s = 0; s < comm.world; ++s) {
    const int64_t* src = comm.peer(g_send, s) + offset(comm, s, comm.rank);
    const int64_t count = comm.peer(g_counts, s)[comm.rank];
    for (int64_t j = 0; j < count; ++j, ++k)
      std::memcpy(g_retrieved + k * dim,
                  table.ptr<const uint16_t>() + (src[j] - comm.rank * rows) * dim, row_bytes);
  }
  g_sync.wait(comm);  // every owner's looked-up rows are in its scratch
  // The row all-to-all: from owner d, the block it looked up for us, after those of the
  // ranks before us; in y, after the rows of the owners before d.
  int64_t out = 0;
  for (int d = 0; d < comm.world; ++d) {
    int64_t from = 0;
    for (int s = 0; s < comm.rank; ++s) from += comm.peer(g_counts, s)[d];
    const int64_t count = g_counts[d];
    std::memcpy(t["y"].ptr<uint16_t>() + out * dim, comm.peer(g_retrieved, d) + from * dim,
                static_cast<size_t>(count) * row_bytes);
    out += count;
  }
  g_sync.wait(comm);  // nobody rewrites its scratch while a peer still reads it
  return 0;
}
