// gemm_all_gather on the host backend: the baseline's semantics in plain C++ over the
// symmetric heap. Each rank computes its piece P = a @ b in float and rounds it to bf16
// (torch.matmul's output) into a heap scratch; after a barrier it copies every rank's
// piece, in rank order, into a [world, M, N/w] buffer (all_gather's output), then lays the
// pieces side by side along the columns into c (torch.cat(dim=1)); a second barrier keeps
// every piece unchanged until every peer has copied it.
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

kf::host::Barrier g_sync;     // see <kf/host.h>
uint16_t* g_piece = nullptr;  // [M, N/w] bf16: this rank's product

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

// p = a @ b, a [m, k] and b [k, n] bf16, into p [m, n] bf16, accumulating in float.
void matmul(uint16_t* p, const uint16_t* a, const uint16_t* b, int64_t m, int64_t k, int64_t n) {
  std::vector<float> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0f);
    for (int64_t kk = 0; kk < k; ++kk) {
      const float aik = bf16_to_float(a[i * k + kk]);
      for (int64_t j = 0; j < n; ++j) row[j] += aik * bf16_to_float(b[kk * n + j]);
    }
    for (int64_t j = 0; j < n; ++j) p[i * n + j] = float_to_bf16(row[j]);
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  g_piece = comm.alloc_array<uint16_t>(static_cast<size_t>(t["a"].shape[0] * t["b"].shape[1]));
  return synced && g_piece ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& a = t["a"];
  const kf::Tensor& b = t["b"];
  const int64_t m = a.shape[0], k = a.shape[1], nl = b.shape[1], n = nl * comm.world;
  const size_t piece = static_cast<size_t>(m * nl);
  // Safe without a barrier first: every peer finished copying our piece before the last
  // call's final barrier.
  matmul(g_piece, a.ptr<const uint16_t>(), b.ptr<const uint16_t>(), m, k, nl);
  g_sync.wait(comm);  // every rank's piece is ready
  std::vector<uint16_t> gathered(piece * comm.world);
  for (int s = 0; s < comm.world; ++s)
    std::memcpy(&gathered[s * piece], comm.peer(g_piece, s), piece * sizeof(uint16_t));
  uint16_t* c = t["c"].ptr<uint16_t>();
  for (int64_t i = 0; i < m; ++i)
    for (int s = 0; s < comm.world; ++s)
      std::memcpy(&c[i * n + s * nl], &gathered[s * piece + i * nl],
                  static_cast<size_t>(nl) * sizeof(uint16_t));
  g_sync.wait(comm);  // nobody recomputes its piece while a peer still copies it
  return 0;
}
