// A simple correct host candidate for embedding_lookup, pull style: each rank works out
// where each of its indices goes in y (a stable counting sort by owner rank); once every
// rank has entered the call (so every peer's table holds this call's values), it copies
// each row straight from its owner's table through comm.peer; a second barrier keeps our
// table in place until every peer has read it.
#include <kf/host.h>
#include <kf/kf.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

kf::host::Barrier g_sync;  // see <kf/host.h>

// pos[i] = the position of index i in y: the indices of lower owners come first, then
// this owner's earlier ones.
std::vector<int64_t> positions(const int64_t* idx, int64_t n, int64_t rows, int world) {
  std::vector<int64_t> next(static_cast<size_t>(world) + 1, 0);
  for (int64_t i = 0; i < n; ++i) ++next[static_cast<size_t>(idx[i] / rows) + 1];
  for (int r = 1; r <= world; ++r) next[r] += next[r - 1];  // first slot of each owner
  std::vector<int64_t> pos(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) pos[i] = next[static_cast<size_t>(idx[i] / rows)]++;
  return pos;
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  return g_sync.setup(comm) ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const int64_t* idx = t["indices"].ptr<const int64_t>();
  const kf::Tensor& table = t["table"];
  const int64_t n = t["indices"].numel, rows = table.shape[0], dim = table.shape[1];
  const std::vector<int64_t> pos = positions(idx, n, rows, comm.world);
  uint16_t* y = t["y"].ptr<uint16_t>();
  g_sync.wait(comm);  // every rank's table is ready
  for (int64_t i = 0; i < n; ++i) {
    const int owner = static_cast<int>(idx[i] / rows);
    const uint16_t* src = comm.peer(table.ptr<const uint16_t>(), owner) + (idx[i] % rows) * dim;
    std::memcpy(y + pos[i] * dim, src, static_cast<size_t>(dim) * sizeof(uint16_t));
  }
  g_sync.wait(comm);  // nobody has its table regenerated while a peer still reads it
  return 0;
}
