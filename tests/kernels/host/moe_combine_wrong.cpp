// Fault (problem moe_combine, host): the host example (problems/moe_combine/examples/
// host.cpp) with each token's weights listed in logit order (the top expert's first, as
// torch.topk returns them) but handed out to its experts in index order: wherever the top
// expert has the higher index (about half the tokens at topk 2) the two weights trade
// places, so y is off by |w1 - w2| * |x1 - x2|, mostly far above atol 0.03.
// Verdict: mismatch on y, at world 1 and at world 2.
#include <kf/host.h>
#include <kf/kf.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

kf::host::Barrier g_sync;  // see <kf/host.h>

// The rank holding position p of our pairs and the row of its x (description: SPLITS,
// LOCAL EXPERTS).
void locate(int64_t p, int64_t rows, int64_t world, int64_t local, int64_t rank, int64_t* d,
            int64_t* row) {
  const int64_t q = rows / world;
  *d = p / q < world - 1 ? p / q : world - 1;
  const int64_t size = *d == world - 1 ? rows - (world - 1) * q : q, chunk = size / local;
  const int64_t off = p - *d * q, l = off / chunk < local - 1 ? off / chunk : local - 1;
  const int64_t sub = l == local - 1 ? size - (local - 1) * chunk : chunk;
  *row = world * l * chunk + rank * sub + (off - l * chunk);
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  return g_sync.setup(comm) ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const float* logits = t["logits"].ptr<const float>();
  const int64_t m = t["logits"].shape[0], n = t["y"].shape[1], world = comm.world;
  const int e = static_cast<int>(t.iparam("E")), topk = static_cast<int>(t.iparam("topk"));
  // chosen[x * m + t] and weight[x * m + t]: token t's topk experts (highest logit, ties
  // to the lower index) and the softmax of their logits.
  std::vector<char> chosen(static_cast<size_t>(e * m), 0);
  std::vector<float> weight(static_cast<size_t>(e * m), 0.0f);
  for (int64_t tok = 0; tok < m; ++tok) {
    const float* row = logits + tok * e;
    int top = -1;
    std::vector<int> ranked;  // the chosen experts, highest logit first
    for (int k = 0; k < topk; ++k) {
      int best = -1;
      for (int x = 0; x < e; ++x)
        if (!chosen[x * m + tok] && (best < 0 || row[x] > row[best])) best = x;
      chosen[best * m + tok] = 1;
      ranked.push_back(best);
      if (k == 0) top = best;
    }
    float sum = 0.0f;
    for (int x = 0; x < e; ++x)
      if (chosen[x * m + tok]) sum += std::exp(row[x] - row[top]);
    // The bug: the k-th weight in logit order goes to the k-th chosen expert by index.
    std::vector<float> by_logit;
    for (int x : ranked) by_logit.push_back(std::exp(row[x] - row[top]) / sum);
    size_t next = 0;
    for (int x = 0; x < e; ++x)
      if (chosen[x * m + tok]) weight[x * m + tok] = by_logit[next++];
  }
  g_sync.wait(comm);  // every peer's x is ready
  std::vector<float> acc(static_cast<size_t>(m * n), 0.0f);
  int64_t p = 0;
  for (int64_t f = 0; f < e * m; ++f) {
    if (!chosen[f]) continue;
    int64_t d, row;
    locate(p++, m * topk, world, e / world, comm.rank, &d, &row);
    const uint16_t* src = comm.peer(t["x"].ptr<const uint16_t>(), static_cast<int>(d)) + row * n;
    float* dst = acc.data() + (f % m) * n;
    for (int64_t k = 0; k < n; ++k) dst[k] += weight[f] * kf::host::bf16_to_float(src[k]);
  }
  g_sync.wait(comm);  // every peer is done reading our x
  uint16_t* y = t["y"].ptr<uint16_t>();
  for (int64_t i = 0; i < m * n; ++i) y[i] = kf::host::float_to_bf16(acc[i]);
  return 0;
}
