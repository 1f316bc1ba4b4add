// gnn_feature_exchange on the host backend: the baseline's semantics in plain C++ over
// the symmetric heap, in the reference's two steps. Each rank gathers its feature rows by
// its ids into a heap scratch (features[ids], the index_select); after a barrier, each
// rank pulls from every sender s its chunk (rank - s) mod world into out chunk
// (s - rank) mod world (the rotated all_to_all); a second barrier keeps the scratch
// unwritten until every peer has read it.
#include <kf/host.h>
#include <kf/kf.h>

#include <cstdint>
#include <cstring>

namespace {

kf::host::Barrier g_sync;        // see <kf/host.h>
uint16_t* g_gathered = nullptr;  // [world * rows, hidden]: features[ids]

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  g_gathered = comm.alloc_array<uint16_t>(static_cast<size_t>(t["features"].numel));
  return synced && g_gathered ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& features = t["features"];
  const int64_t w = comm.world, n = features.shape[0], hidden = features.shape[1];
  const size_t row_bytes = static_cast<size_t>(hidden) * sizeof(uint16_t);
  const int64_t* ids = t["ids"].ptr<const int64_t>();
  for (int64_t p = 0; p < n; ++p)  // the gather: index_select of rows
    std::memcpy(g_gathered + p * hidden, features.ptr<const uint16_t>() + ids[p] * hidden,
                row_bytes);
  g_sync.wait(comm);  // every rank's gathered block is in its scratch
  const int64_t rows = n / w;
  const size_t chunk_bytes = static_cast<size_t>(rows) * row_bytes;
  for (int s = 0; s < w; ++s) {  // the all_to_all, the lists rotated by rank
    const int64_t from = ((comm.rank - s) % w + w) % w, to = ((s - comm.rank) % w + w) % w;
    std::memcpy(t["out"].ptr<uint16_t>() + to * rows * hidden,
                comm.peer(g_gathered, s) + from * rows * hidden, chunk_bytes);
  }
  g_sync.wait(comm);  // nobody rewrites its scratch while a peer still reads it
  return 0;
}
