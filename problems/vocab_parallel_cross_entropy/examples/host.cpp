// A simple correct host candidate for vocab_parallel_cross_entropy: one exchange of three
// floats per token instead of three all-reduces. Once every rank has entered the call
// (rank 0's target is this call's), each rank writes, for every token, its shard's max m,
// the sum of exp(z - m) over its shard, and the label's logit if the label is in its
// shard; after a second barrier every rank combines the world triples in float:
// M = max of the m, S = sum of s * exp(m - M), loss = log(S) + M - z[label]. A third
// barrier keeps the triples and rank 0's target unchanged until every peer has read them.
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
  for (int64_t row = 0; row < rows; ++row) {
    const uint16_t* z = x + row * vl;
    float m = -INFINITY, s = 0.0f;
    for (int64_t v = 0; v < vl; ++v) m = std::max(m, bf16_to_float(z[v]));
    for (int64_t v = 0; v < vl; ++v) s += std::exp(bf16_to_float(z[v]) - m);
    const int64_t c = label[row] - comm.rank * vl;
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
    const int owner = static_cast<int>(label[row] / vl);
    loss[row] = float_to_bf16(std::log(s) + top - comm.peer(g_stats, owner)[3 * row + 2]);
  }
  g_sync.wait(comm);  // nobody rewrites its triples or target while a peer still reads them
  return 0;
}
