// vocab_parallel_log_prob_topk on the host backend: the baseline's semantics in plain C++
// over the symmetric heap, step by step as PyTorch runs the reference:
//   all_to_all_single: our block of T tokens' rows from every rank's shard (after a
//     barrier: every peer's logits are this call's), then the permute to full rows
//   (the boost added at the label: ParallelKernelBench has it in its inputs)
//   sort ascending with indices, the k-th largest as threshold, masked_fill, softmax,
//   cumsum, the top-p mask (the last position always kept), scatter back
//   log_softmax in fp32 and the label's entry
//   all_gather: after a second barrier every rank copies the world blocks into logp
// The probabilities and their cumulative sum stay fp32 (PyTorch's are bf16: see
// problem.json). A third barrier keeps the scratch and the logits unchanged until every
// peer has read them.
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

namespace {

kf::host::Barrier g_sync;  // see <kf/host.h>
float* g_logp = nullptr;   // [T]: our block's log-probs, read by every peer

// Row `z` (length V) filtered in place as _apply_top_k_top_p does: dropped entries -inf.
void filter_row(std::vector<float>& z, int64_t k, float top_p) {
  const size_t n = z.size();
  std::vector<int32_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](int32_t a, int32_t b) { return z[a] < z[b]; });
  std::vector<float> s(n);
  for (size_t j = 0; j < n; ++j) s[j] = z[idx[j]];
  const float h = s[n - static_cast<size_t>(k)];
  for (float& v : s)
    if (v < h) v = -INFINITY;  // top-k mask
  const float top = s[n - 1];
  float total = 0.0f;
  for (float v : s) total += std::exp(v - top);
  float cum = 0.0f;
  for (size_t j = 0; j < n; ++j) {
    cum += std::exp(s[j] - top) / total;
    const bool keep = cum > 1.0f - top_p || j == n - 1;
    z[idx[j]] = keep ? s[j] : -INFINITY;  // scatter back
  }
}

// log_softmax(z)[c] in fp32.
float log_softmax_at(const std::vector<float>& z, int64_t c) {
  const float top = *std::max_element(z.begin(), z.end());
  float sum = 0.0f;
  for (float v : z) sum += std::exp(v - top);
  return z[c] - top - std::log(sum);
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
  const int64_t vocab = comm.world * vl;
  const uint16_t* x = logits.ptr<const uint16_t>();
  const int64_t* label = t["target"].ptr<const int64_t>();
  g_sync.wait(comm);  // every rank's logits are this call's
  // all_to_all_single: rank r's rows [first, first + T) land in recv[r].
  std::vector<uint16_t> recv(static_cast<size_t>(comm.world * per_rank * vl));
  for (int r = 0; r < comm.world; ++r)
    std::memcpy(recv.data() + r * per_rank * vl, comm.peer(x, r) + first * vl,
                static_cast<size_t>(per_rank * vl) * sizeof(uint16_t));
  std::vector<float> z(static_cast<size_t>(vocab));
  for (int64_t j = 0; j < per_rank; ++j) {
    for (int64_t v = 0; v < vocab; ++v)  // the permute: [world, T, Vl] -> [T, V]
      z[v] = kf::host::bf16_to_float(recv[((v / vl) * per_rank + j) * vl + v % vl]);
    z[label[first + j]] += static_cast<float>(t.param("boost", 8));
    filter_row(z, t.iparam("top_k", 10), static_cast<float>(t.param("top_p", 0.9)));
    g_logp[j] = log_softmax_at(z, label[first + j]);
  }
  g_sync.wait(comm);  // every block is written
  float* out = t["logp"].ptr<float>();
  for (int r = 0; r < comm.world; ++r)  // all_gather
    std::memcpy(out + r * per_rank, comm.peer(g_logp, r),
                static_cast<size_t>(per_rank) * sizeof(float));
  g_sync.wait(comm);  // nobody rewrites its block or its logits while a peer reads them
  return 0;
}
