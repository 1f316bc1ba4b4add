// gemm_all_reduce on the host backend: the baseline's semantics in plain C++ over the
// symmetric heap. Each rank computes its partial product P = a @ b in float and rounds it
// to bf16 (torch.matmul's output) into a heap scratch; after a barrier every rank sums all
// peers' P in float in rank order (the same bits on every rank); a second barrier keeps
// the scratch unwritten until every peer has read it.
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

kf::host::Barrier g_sync;       // see <kf/host.h>
uint16_t* g_partial = nullptr;  // [M, N] bf16

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

// P = a @ b, a [m, k] and b [k, n] bf16, into p [m, n] bf16, accumulating in float.
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
  g_partial = comm.alloc_array<uint16_t>(static_cast<size_t>(t["c"].numel));
  return synced && g_partial ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& a = t["a"];
  const kf::Tensor& b = t["b"];
  kf::Tensor& c = t["c"];
  const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  matmul(g_partial, a.ptr<const uint16_t>(), b.ptr<const uint16_t>(), m, k, n);
  g_sync.wait(comm);  // every rank's partial product is in its scratch
  uint16_t* out = c.ptr<uint16_t>();
  for (int64_t e = 0; e < m * n; ++e) {
    float s = 0;
    for (int r = 0; r < comm.world; ++r) s += bf16_to_float(comm.peer(g_partial, r)[e]);
    out[e] = float_to_bf16(s);
  }
  g_sync.wait(comm);  // nobody rewrites its scratch while a peer still reads it
  return 0;
}
