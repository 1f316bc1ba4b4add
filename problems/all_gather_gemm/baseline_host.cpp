// all_gather_gemm on the host backend: the baseline's semantics in plain C++ over the
// symmetric heap. After a barrier (every rank's a is this call's) each rank copies every
// peer's a into a pieces buffer (all_gather), lays the pieces side by side along k
// (torch.cat(dim=1)) and multiplies by its own b in float, rounding once to bf16; a second
// barrier keeps every a unchanged until every peer has copied it.
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
  const kf::Tensor& a = t["a"];
  const kf::Tensor& b = t["b"];
  const int64_t m = a.shape[0], kl = a.shape[1], k = b.shape[0], n = b.shape[1];
  std::vector<uint16_t> pieces(static_cast<size_t>(m * k)), full(pieces.size());
  g_sync.wait(comm);  // every rank's a is ready
  for (int s = 0; s < comm.world; ++s)
    std::memcpy(&pieces[static_cast<size_t>(s * m * kl)], comm.peer(a.ptr<const uint16_t>(), s),
                a.bytes());
  for (int64_t i = 0; i < m; ++i)
    for (int s = 0; s < comm.world; ++s)
      std::memcpy(&full[static_cast<size_t>(i * k + s * kl)],
                  &pieces[static_cast<size_t>((s * m + i) * kl)],
                  static_cast<size_t>(kl) * sizeof(uint16_t));
  const uint16_t* pb = b.ptr<const uint16_t>();
  uint16_t* c = t["c"].ptr<uint16_t>();
  std::vector<float> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0f);
    for (int64_t kk = 0; kk < k; ++kk) {
      const float aik = bf16_to_float(full[static_cast<size_t>(i * k + kk)]);
      for (int64_t j = 0; j < n; ++j) row[j] += aik * bf16_to_float(pb[kk * n + j]);
    }
    for (int64_t j = 0; j < n; ++j) c[i * n + j] = float_to_bf16(row[j]);
  }
  g_sync.wait(comm);  // nobody's a is regenerated while a peer still copies it
  return 0;
}
