// vocab_parallel_log_prob_topk on the host backend, with the knobs of kforge's template
// search. Both families filter in float the same way (the k-th largest by selection, the
// kept entries sorted ascending, the top-p prefix dropped) and differ in what crosses:
// pull: the reference's layout. After a barrier (every logits is this call's) each rank
// copies the contiguous block of its T tokens' rows from every shard, filters and scores
// its tokens into its scratch; after a second barrier every rank copies the world blocks
// into logp (the all-gather); a third keeps scratch and logits until every peer has read.
// topk: vocab-parallel. The filters need from a shard only its k largest values (plus how
// many unsent entries equal the smallest sent one: ties with the k-th largest are kept)
// and the label's value where the shard holds it. After a barrier (every target is this
// call's: a token's label is its owner's) each rank reduces its shard of every token to
// such a record in its scratch; after a second barrier every rank copies the world's
// records and scores every token itself, so no all-gather is needed; a third barrier
// keeps the records and targets until every peer has read them. It moves
// (world - 1) * N * (k + 2) floats instead of (world - 1) / world * N * V bf16.
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

// Knobs (kforge's template search sets them with #defines in front): which layout the
// logits are filtered in, and how many elements one copy step moves. Every value is
// correct; they change what crosses and the access pattern.
#ifndef KF_ALGO
#define KF_ALGO pull  // pull | topk
#endif
#ifndef KF_CHUNK_ELEMS
#define KF_CHUNK_ELEMS 65536
#endif

namespace {

enum class algo { pull, topk };
constexpr algo kAlgo = algo::KF_ALGO;
constexpr size_t kChunk = KF_CHUNK_ELEMS;
static_assert(kChunk > 0, "KF_CHUNK_ELEMS must be positive");

kf::host::Barrier g_sync;      // see <kf/host.h>
float* g_shared = nullptr;     // pull: our [T] log-probs; topk: our [N][k + 2] records
std::vector<uint16_t> g_rows;  // pull: [world][T][Vl], our tokens' shards
std::vector<float> g_records;  // topk: [world][N][k + 2], every rank's records
std::vector<float> g_row;      // one row's values

using kf::host::bf16_to_float;
using kf::host::chunked_copy;

void copy(void* dst, const void* src, size_t bytes) {
  chunked_copy(static_cast<char*>(dst), static_cast<const char*>(src), bytes,
               kChunk * sizeof(float));
}

// The log-prob of the label (value zc) over the entries kept of `kept`, which holds every
// entry >= the k-th largest (reordered in place).
float score(std::vector<float>& kept, float zc, float top_p) {
  std::sort(kept.begin(), kept.end());
  if (zc < kept.front()) return -INFINITY;  // below the k-th largest
  const float top = kept.back();
  float total = 0.0f;
  for (float v : kept) total += std::exp(v - top);
  size_t keep = 0;
  for (float cum = 0.0f; keep + 1 < kept.size(); ++keep) {  // drop while cum <= 1 - p
    cum += std::exp(kept[keep] - top) / total;
    if (cum > 1.0f - top_p) break;
  }
  if (zc < kept[keep]) return -INFINITY;
  float sum = 0.0f;
  for (size_t j = keep; j < kept.size(); ++j) sum += std::exp(kept[j] - top);
  return zc - top - std::log(sum);
}

// Moves the entries of z >= its k-th largest to the front; returns how many there are.
size_t top_k(std::vector<float>& z, size_t n, size_t k) {
  std::nth_element(z.begin(), z.begin() + (k - 1), z.begin() + n, std::greater<float>());
  const float h = z[k - 1];
  return static_cast<size_t>(
      std::partition(z.begin(), z.begin() + n, [h](float v) { return v >= h; }) - z.begin());
}

struct Shape {
  int64_t rows, vl, per_rank, k;
  float top_p, boost;
};

void run_pull(kf::Comm& comm, kf::Tensors& t, const Shape& s) {
  const int64_t first = comm.rank * s.per_rank, vocab = comm.world * s.vl;
  const uint16_t* x = t["logits"].ptr<const uint16_t>();
  const int64_t* label = t["target"].ptr<const int64_t>();  // our block's are ours
  const size_t block = static_cast<size_t>(s.per_rank * s.vl);
  g_sync.wait(comm);  // every rank's logits are this call's
  for (int r = 0; r < comm.world; ++r)
    copy(g_rows.data() + r * block, comm.peer(x, r) + first * s.vl, block * sizeof(uint16_t));
  for (int64_t j = 0; j < s.per_rank; ++j) {
    for (int64_t v = 0; v < vocab; ++v)
      g_row[v] = bf16_to_float(g_rows[((v / s.vl) * s.per_rank + j) * s.vl + v % s.vl]);
    const float zc = g_row[label[first + j]] += s.boost;
    const size_t n = top_k(g_row, static_cast<size_t>(vocab), static_cast<size_t>(s.k));
    g_row.resize(n);
    g_shared[j] = score(g_row, zc, s.top_p);
    g_row.resize(static_cast<size_t>(vocab));
  }
  g_sync.wait(comm);  // every block is written
  float* out = t["logp"].ptr<float>();
  for (int r = 0; r < comm.world; ++r)  // the all-gather
    copy(out + r * s.per_rank, comm.peer(g_shared, r), static_cast<size_t>(s.per_rank) * 4);
  g_sync.wait(comm);  // nobody rewrites its block or its logits while a peer reads them
}

// Our shard's record of every token: its min(k, Vl) largest values (descending), the
// count of unsent entries equal to the smallest sent, and the label's value (NaN when the
// label is another shard's). Every record is k + 2 floats; unused value slots are -inf.
void shard_records(float* rec, kf::Comm& comm, kf::Tensors& t, const Shape& s) {
  const uint16_t* x = t["logits"].ptr<const uint16_t>();
  const int64_t* target = t["target"].ptr<const int64_t>();
  const size_t kk = static_cast<size_t>(std::min(s.k, s.vl)), stride = s.k + 2;
  for (int64_t i = 0; i < s.rows; ++i) {
    const int64_t c = comm.peer(target, static_cast<int>(i / s.per_rank))[i] - comm.rank * s.vl;
    for (int64_t v = 0; v < s.vl; ++v) g_row[v] = bf16_to_float(x[i * s.vl + v]);
    float* out = rec + i * stride;
    out[s.k + 1] = NAN;
    if (c >= 0 && c < s.vl) out[s.k + 1] = g_row[c] += s.boost;
    std::partial_sort(g_row.begin(), g_row.begin() + kk, g_row.begin() + s.vl,
                      std::greater<float>());
    std::fill(out, out + s.k, -INFINITY);
    std::copy(g_row.begin(), g_row.begin() + kk, out);
    out[s.k] =
        static_cast<float>(std::count(g_row.begin() + kk, g_row.begin() + s.vl, g_row[kk - 1]));
  }
}

void run_topk(kf::Comm& comm, kf::Tensors& t, const Shape& s) {
  const size_t stride = static_cast<size_t>(s.k + 2), n = static_cast<size_t>(s.rows) * stride;
  g_sync.wait(comm);  // every rank's target is this call's
  shard_records(g_shared, comm, t, s);
  g_sync.wait(comm);  // every rank's records are written
  for (int r = 0; r < comm.world; ++r)
    copy(g_records.data() + r * n, comm.peer(g_shared, r), n * sizeof(float));
  g_sync.wait(comm);  // nobody rewrites its records or target while a peer reads them
  float* out = t["logp"].ptr<float>();
  std::vector<float> all(static_cast<size_t>(comm.world * s.k)), kept_values;
  for (int64_t i = 0; i < s.rows; ++i) {
    float zc = NAN;
    for (int r = 0; r < comm.world; ++r) {
      const float* rec = g_records.data() + r * n + i * stride;
      std::copy(rec, rec + s.k, all.begin() + r * s.k);
      if (!std::isnan(rec[s.k + 1])) zc = rec[s.k + 1];
    }
    const size_t kept = top_k(all, all.size(), static_cast<size_t>(s.k));
    kept_values.assign(all.begin(), all.begin() + kept);
    const float h = *std::min_element(kept_values.begin(), kept_values.end());
    for (int r = 0; r < comm.world; ++r) {  // unsent ties with h
      const float* rec = g_records.data() + r * n + i * stride;
      if (rec[s.k - 1] == h)
        kept_values.insert(kept_values.end(), static_cast<size_t>(rec[s.k]), h);
    }
    out[i] = score(kept_values, zc, s.top_p);
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& logits = t["logits"];
  const int64_t rows = logits.shape[0] * logits.shape[1], vl = logits.shape[2];
  const int64_t k = t.iparam("top_k", 10);
  const bool synced = g_sync.setup(comm);
  g_row.assign(static_cast<size_t>(std::max(comm.world * vl, comm.world * k)), 0.0f);
  if (kAlgo == algo::pull) {
    g_shared = comm.alloc_array<float>(static_cast<size_t>(rows / comm.world));
    g_rows.assign(static_cast<size_t>(rows * vl), 0);
  } else {
    g_shared = comm.alloc_array<float>(static_cast<size_t>(rows * (k + 2)));
    g_records.assign(static_cast<size_t>(comm.world * rows * (k + 2)), 0.0f);
  }
  return synced && g_shared ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& logits = t["logits"];
  Shape s;
  s.rows = logits.shape[0] * logits.shape[1];
  s.vl = logits.shape[2];
  s.per_rank = s.rows / comm.world;
  s.k = t.iparam("top_k", 10);
  s.top_p = static_cast<float>(t.param("top_p", 0.9));
  s.boost = static_cast<float>(t.param("boost", 8));
  if (kAlgo == algo::pull)
    run_pull(comm, t, s);
  else
    run_topk(comm, t, s);
  return 0;
}
