// vocab_parallel_cross_entropy on the host backend, with the knobs of kforge's template
// search: one exchange of per-token statistics instead of the reference's three
// all-reduces. Each rank reduces its shard of a token's logits to (m, s): its max and the
// sum of exp(z - m) over the shard, in float. Every rank then combines the world pairs in
// rank order: M = max of the m, S = sum of s * exp(m - M), loss = log(S) + M - z[label],
// rounded to bf16 once (the reference rounds at every step; the tolerance allows both),
// the same bits on every rank.
// pull: write our pairs into our scratch (safe before any barrier: every peer finished
// reading it before the last call's final barrier), barrier (every pair, every logits and
// rank 0's target are this call's), combine from the peers' scratch, reading the label's
// logit straight from its owner's logits, barrier (no scratch or input is rewritten while
// a peer still reads it).
// push: compute our pairs, barrier (rank 0's target is this call's, and every peer has
// left the last call, so it is done reading its staging), add the label's logit where we
// own it and write the triples into slot `rank` of every rank's staging, peers first,
// barrier (every slot of ours is written; nobody reads rank 0's target after it: the
// label's logit is the sum of the slots' third floats, every slot but its owner's 0), combine
// from our own heap and return: a peer rewrites our staging only after the next call's
// first barrier, which waits for us.
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

// Knobs (kforge's template search sets them with #defines in front): who moves the
// statistics (pull: read the peers' scratch; push: write into the peers' buffers) and how
// many tokens one copy or combining step handles. Every value is correct; they change
// the access pattern.
#ifndef KF_ALGO
#define KF_ALGO pull  // pull | push
#endif
#ifndef KF_CHUNK_ELEMS
#define KF_CHUNK_ELEMS 65536
#endif

namespace {

enum class algo { pull, push };
constexpr algo kAlgo = algo::KF_ALGO;
constexpr size_t kChunk = KF_CHUNK_ELEMS;
static_assert(kChunk > 0, "KF_CHUNK_ELEMS must be positive");
// Floats per token: pull keeps (m, s); push adds the label's logit (0 where not ours).
constexpr int64_t kStride = kAlgo == algo::push ? 3 : 2;

kf::host::Barrier g_sync;    // see <kf/host.h>
float* g_stats = nullptr;    // pull: our [rows][2]; push: world slots of [rows][3]
std::vector<float> g_local;  // push: our [rows][3] before it is sent

using kf::host::bf16_to_float;
using kf::host::chunked_copy;
using kf::host::float_to_bf16;

// (m, s) of every token's shard into out[row * kStride + 0, 1].
void shard_stats(float* out, const uint16_t* x, int64_t rows, int64_t vl) {
  for (int64_t row = 0; row < rows; ++row) {
    const uint16_t* z = x + row * vl;
    float m = -INFINITY, s = 0.0f;
    for (int64_t v = 0; v < vl; ++v) m = std::max(m, bf16_to_float(z[v]));
    for (int64_t v = 0; v < vl; ++v) s += std::exp(bf16_to_float(z[v]) - m);
    out[row * kStride] = m;
    out[row * kStride + 1] = s;
  }
}

// loss[row] = log(S) + M - label_logit(row), from the world ranks' (m, s) in src[r]. A
// step takes kChunk tokens and reads each rank's pairs for them in turn; every token still
// folds the ranks in rank order, so the result does not depend on the step.
template <class LabelLogit>
void combine(uint16_t* loss, const float* const* src, int world, int64_t rows,
             LabelLogit label_logit) {
  const int64_t step = static_cast<int64_t>(std::min<size_t>(kChunk, rows));
  std::vector<float> top(static_cast<size_t>(step)), sum(static_cast<size_t>(step));
  for (int64_t b = 0; b < rows; b += step) {
    const int64_t n = std::min(step, rows - b);
    std::fill(top.begin(), top.end(), -INFINITY);
    std::fill(sum.begin(), sum.end(), 0.0f);
    for (int r = 0; r < world; ++r)
      for (int64_t i = 0; i < n; ++i) top[i] = std::max(top[i], src[r][(b + i) * kStride]);
    for (int r = 0; r < world; ++r)
      for (int64_t i = 0; i < n; ++i) {
        const float* st = src[r] + (b + i) * kStride;
        sum[i] += st[1] * std::exp(st[0] - top[i]);
      }
    for (int64_t i = 0; i < n; ++i)
      loss[b + i] = float_to_bf16(std::log(sum[i]) + top[i] - label_logit(b + i));
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const int64_t rows = t["logits"].shape[0] * t["logits"].shape[1];
  const bool synced = g_sync.setup(comm);
  const int64_t slots = kAlgo == algo::push ? comm.world : 1;
  g_stats = comm.alloc_array<float>(static_cast<size_t>(slots * rows * kStride));
  if (kAlgo == algo::push) g_local.assign(static_cast<size_t>(rows * kStride), 0.0f);
  return synced && g_stats ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& logits = t["logits"];
  const int64_t rows = logits.shape[0] * logits.shape[1], vl = logits.shape[2];
  const uint16_t* x = logits.ptr<const uint16_t>();
  uint16_t* loss = t["loss"].ptr<uint16_t>();
  const int64_t* label = comm.peer(t["target"].ptr<const int64_t>(), 0);  // rank 0's
  std::vector<const float*> src(static_cast<size_t>(comm.world));
  if (kAlgo == algo::pull) {
    shard_stats(g_stats, x, rows, vl);
    g_sync.wait(comm);  // every pair, every logits and rank 0's target are this call's
    for (int r = 0; r < comm.world; ++r) src[r] = comm.peer(g_stats, r);
    combine(loss, src.data(), comm.world, rows, [&](int64_t row) {
      const int owner = static_cast<int>(label[row] / vl);
      return bf16_to_float(comm.peer(x, owner)[row * vl + label[row] % vl]);
    });
    g_sync.wait(comm);  // nobody rewrites its scratch or inputs while a peer reads them
    return 0;
  }
  float* mine = g_local.data();
  shard_stats(mine, x, rows, vl);
  g_sync.wait(comm);  // rank 0's target is this call's; every peer has left the last call
  const int64_t first = comm.rank * vl;
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t c = label[row] - first;
    mine[row * kStride + 2] = c >= 0 && c < vl ? bf16_to_float(x[row * vl + c]) : 0.0f;
  }
  const size_t bytes = static_cast<size_t>(rows * kStride) * sizeof(float);
  for (int k = 1; k <= comm.world; ++k) {  // peers first, starting after us
    const int d = (comm.rank + k) % comm.world;
    chunked_copy(reinterpret_cast<char*>(comm.peer(g_stats, d) + comm.rank * rows * kStride),
                 reinterpret_cast<const char*>(mine), bytes, kChunk * kStride * sizeof(float));
  }
  g_sync.wait(comm);  // every slot of our staging is written
  for (int r = 0; r < comm.world; ++r) src[r] = g_stats + r * rows * kStride;
  // The label's logit without rank 0's target, which may be rewritten by now: every slot
  // but its owner's holds 0, so the sum over the slots is that logit exactly.
  combine(loss, src.data(), comm.world, rows, [&](int64_t row) {
    float z = 0.0f;
    for (int r = 0; r < comm.world; ++r) z += src[r][row * kStride + 2];
    return z;
  });
  return 0;
}
