// Fault (problem vocab_parallel_cross_entropy, host backend):
// problems/vocab_parallel_cross_entropy/examples/host.cpp with one planted bug: it reads the
// label of token (b, t) at target[t * batch + b], as if target were [seq, batch], instead of
// target[b * seq + t], so almost every token's loss uses another token's label, at every
// world size. Verdict: mismatch (tests/problems_test.cpp).
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace {

kf::host::Barrier g_sync;  // see <kf/host.h>
float* g_stats = nullptr;  // [rows][3]: max, sum of exp(z - max), label logit (its owner's)

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const size_t rows = static_cast<size_t>(t["logits"].shape[0] * t["logits"].shape[1]);
  const bool synced = g_sync.setup(comm);
  g_stats = comm.alloc_array<float>(3 * rows);
  return synced && g_stats ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& logits = t["logits"];
  const int64_t rows = logits.shape[0] * logits.shape[1], vl = logits.shape[2];
  const uint16_t* x = logits.ptr<const uint16_t>();
  g_sync.wait(comm);  // rank 0's target is this call's
  const int64_t* label = comm.peer(t["target"].ptr<const int64_t>(), 0);
  const int64_t batch = logits.shape[0], seq = logits.shape[1];
  // The bug: token (b, t) = row b * seq + t reads the label at t * batch + b.
  auto label_of = [&](int64_t row) { return label[row % seq * batch + row / seq]; };
  for (int64_t row = 0; row < rows; ++row) {
    const uint16_t* z = x + row * vl;
    float m = -INFINITY, s = 0.0f;
    for (int64_t v = 0; v < vl; ++v) m = std::max(m, bf16_to_float(z[v]));
    for (int64_t v = 0; v < vl; ++v) s += std::exp(bf16_to_float(z[v]) - m);
    const int64_t c = label_of(row) - comm.rank * vl;
    g_stats[3 * row] = m;
    g_stats[3 * row + 1] = s;
    g_stats[3 * row + 2] = c >= 0 && c < vl ? bf16_to_float(z[c]) : 0.0f;
  }
  g_sync.wait(comm);  // every rank's triples are written
  uint16_t* loss = t["loss"].ptr<uint16_t>();
  for (int64_t row = 0; row < rows; ++row) {
    float top = -INFINITY;
    for (int r = 0; r < comm.world; ++r) top = std::max(top, comm.peer(g_stats, r)[3 * row]);
    float s = 0.0f;
    for (int r = 0; r < comm.world; ++r) {
      const float* st = comm.peer(g_stats, r) + 3 * row;
      s += st[1] * std::exp(st[0] - top);
    }
    const int owner = static_cast<int>(label_of(row) / vl);
    loss[row] = float_to_bf16(std::log(s) + top - comm.peer(g_stats, owner)[3 * row + 2]);
  }
  g_sync.wait(comm);  // nobody rewrites its triples or target while a peer still reads them
  return 0;
}
