// A simple correct host candidate for gemm_all_gather, the host twin of examples/uva.cu:
// each rank computes its piece a @ b in float straight into its own column block of c
// (columns rank*N/w to (rank+1)*N/w - 1), rounding once to bf16; after a barrier (every
// rank's block is in its c) it copies every peer's block out of the peer's c into the same
// columns of its own; a second barrier keeps every c unchanged until every peer has read it.
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

kf::host::Barrier g_sync;  // see <kf/host.h>

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  return g_sync.setup(comm) ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const uint16_t* a = t["a"].ptr<const uint16_t>();
  const uint16_t* b = t["b"].ptr<const uint16_t>();
  uint16_t* c = t["c"].ptr<uint16_t>();
  const int64_t m = t["a"].shape[0], k = t["a"].shape[1], nl = t["b"].shape[1];
  const int64_t n = nl * comm.world;
  // Our block, row by row: c[i][rank*nl + j] = sum over kk of a[i][kk] * b[kk][j]. Only
  // we write it, and no peer reads it before the barrier below.
  std::vector<float> row(static_cast<size_t>(nl));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0f);
    for (int64_t kk = 0; kk < k; ++kk) {
      const float aik = bf16_to_float(a[i * k + kk]);
      for (int64_t j = 0; j < nl; ++j) row[j] += aik * bf16_to_float(b[kk * nl + j]);
    }
    for (int64_t j = 0; j < nl; ++j) c[i * n + comm.rank * nl + j] = float_to_bf16(row[j]);
  }
  g_sync.wait(comm);  // every rank's block is in its c
  for (int s = 0; s < comm.world; ++s) {
    if (s == comm.rank) continue;
    const uint16_t* cs = comm.peer(static_cast<const uint16_t*>(c), s);
    for (int64_t i = 0; i < m; ++i)  // rank s's block: columns s*nl.. of each row
      std::memcpy(&c[i * n + s * nl], &cs[i * n + s * nl], static_cast<size_t>(nl) * 2);
  }
  g_sync.wait(comm);  // nobody's c is poisoned for the next call while a peer still reads it
  return 0;
}
