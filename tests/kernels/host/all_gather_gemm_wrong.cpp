// Fault (problem all_gather_gemm, host backend): problems/all_gather_gemm/examples/host.cpp with
// one planted bug: it leaves out rank 0's shard of the product. Verdict: mismatch
// (tests/problems_test.cpp).
#include <kf/host.h>
#include <kf/kf.h>

#include <cstdint>
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
  const kf::Tensor& a = t["a"];
  const kf::Tensor& b = t["b"];
  const int64_t m = a.shape[0], kl = a.shape[1], n = b.shape[1];
  const uint16_t* pb = b.ptr<const uint16_t>();
  std::vector<float> acc(static_cast<size_t>(m * n), 0.0f);
  g_sync.wait(comm);  // every peer's a is ready
  for (int s = 1; s < comm.world; ++s) {
    const uint16_t* as = comm.peer(a.ptr<const uint16_t>(), s);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t k = 0; k < kl; ++k) {
        const float aik = bf16_to_float(as[i * kl + k]);
        for (int64_t j = 0; j < n; ++j)
          acc[i * n + j] += aik * bf16_to_float(pb[(s * kl + k) * n + j]);
      }
  }
  uint16_t* c = t["c"].ptr<uint16_t>();
  for (int64_t e = 0; e < m * n; ++e) c[e] = float_to_bf16(acc[e]);
  g_sync.wait(comm);  // nobody's a is regenerated while a peer still reads it
  return 0;
}
