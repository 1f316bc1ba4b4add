// A simple correct host candidate for vocab_parallel_log_prob_topk, in the reference's
// sequence-parallel layout. Once every rank has entered the call (every logits is this
// call's), each rank reads the full rows of its own T tokens from the world shards, adds
// the boost at the label, applies the two filters in float (sort, top-k threshold, top-p
// prefix) and writes the label's log-prob into its scratch; after a second barrier every
// rank copies the world blocks into its logp. A third barrier keeps the scratch and the
// logits unchanged until every peer has read them.
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace {

kf::host::Barrier g_sync;  // see <kf/host.h>
float* g_logp = nullptr;   // [T]: the log-probs of our block of tokens

// The log-prob of the label, whose (boosted) value is zc, in row z (sorted in place).
float log_prob(std::vector<float>& z, float zc, int64_t k, float top_p) {
  std::sort(z.begin(), z.end());
  const float h = z[z.size() - static_cast<size_t>(k)];  // the k-th largest
  size_t keep = static_cast<size_t>(std::lower_bound(z.begin(), z.end(), h) - z.begin());
  const float top = z.back();
  float total = 0.0f;
  for (size_t j = keep; j < z.size(); ++j) total += std::exp(z[j] - top);
  for (float cum = 0.0f; keep + 1 < z.size(); ++keep) {  // drop while cum <= 1 - p
    cum += std::exp(z[keep] - top) / total;
    if (cum > 1.0f - top_p) break;
  }
  if (zc < z[keep]) return -INFINITY;  // the label was filtered out
  float kept = 0.0f;
  for (size_t j = keep; j < z.size(); ++j) kept += std::exp(z[j] - top);
  return zc - top - std::log(kept);
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const int64_t rows = t["logits"].shape[0] * t["logits"].shape[1];
  const bool synced = g_sync.setup(comm);
  g_logp = comm.alloc_array<float>(static_cast<size_t>(rows / comm.world));
  return synced && g_logp ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& logits = t["logits"];
  const int64_t rows = logits.shape[0] * logits.shape[1], vl = logits.shape[2];
  const int64_t per_rank = rows / comm.world, first = comm.rank * per_rank;
  const int64_t k = t.iparam("top_k", 10);
  const float top_p = static_cast<float>(t.param("top_p", 0.9));
  const float boost = static_cast<float>(t.param("boost", 8));
  const uint16_t* x = logits.ptr<const uint16_t>();
  // Our own target: its rows of our block are our tokens' labels.
  const int64_t* label = t["target"].ptr<const int64_t>();
  g_sync.wait(comm);  // every rank's logits are this call's
  std::vector<float> z(static_cast<size_t>(comm.world * vl));
  for (int64_t i = first; i < first + per_rank; ++i) {
    for (int r = 0; r < comm.world; ++r) {
      const uint16_t* shard = comm.peer(x, r) + i * vl;
      for (int64_t v = 0; v < vl; ++v) z[r * vl + v] = kf::host::bf16_to_float(shard[v]);
    }
    const float zc = z[label[i]] + boost;
    z[label[i]] = zc;
    g_logp[i - first] = log_prob(z, zc, k, top_p);
  }
  g_sync.wait(comm);  // every block is written
  float* out = t["logp"].ptr<float>();
  for (int64_t i = 0; i < rows; ++i) out[i] = comm.peer(g_logp, i / per_rank)[i % per_rank];
  g_sync.wait(comm);  // nobody rewrites its block or its logits while a peer reads them
  return 0;
}
