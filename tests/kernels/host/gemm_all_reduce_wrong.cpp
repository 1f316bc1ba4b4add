// Fault (problem gemm_all_reduce, host backend): problems/gemm_all_reduce/examples/host.cpp
// with one planted bug: the sum stops one rank short and leaves out the last rank's partial
// product (at world 1 it sums nothing and c is all zeros). Verdict: mismatch
// (tests/problems_test.cpp).
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cstdint>

namespace {

kf::host::Barrier g_sync;    // see <kf/host.h>
float* g_partial = nullptr;  // [M, N]

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  g_partial = comm.alloc_array<float>(static_cast<size_t>(t["c"].numel));
  return synced && g_partial ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const uint16_t* a = t["a"].ptr<const uint16_t>();
  const uint16_t* b = t["b"].ptr<const uint16_t>();
  const int64_t m = t["a"].shape[0], k = t["a"].shape[1], n = t["b"].shape[1];
  // Safe without a barrier first: every peer finished reading our scratch before the
  // last call's final barrier.
  std::fill(g_partial, g_partial + m * n, 0.0f);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t kk = 0; kk < k; ++kk) {
      const float aik = bf16_to_float(a[i * k + kk]);
      for (int64_t j = 0; j < n; ++j) g_partial[i * n + j] += aik * bf16_to_float(b[kk * n + j]);
    }
  g_sync.wait(comm);  // every rank's partial is complete
  uint16_t* c = t["c"].ptr<uint16_t>();
  for (int64_t e = 0; e < m * n; ++e) {
    float s = 0;
    for (int r = 0; r < comm.world - 1; ++r) s += comm.peer(g_partial, r)[e];  // the bug
    c[e] = float_to_bf16(s);
  }
  g_sync.wait(comm);  // nobody recomputes its partial while a peer still reads it
  return 0;
}
