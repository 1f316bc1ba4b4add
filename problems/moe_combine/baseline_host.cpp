// moe_combine on the host backend: the baseline's semantics in plain C++ over the
// symmetric heap. Each rank puts its x back in source-rank order in a heap scratch; after
// a barrier it pulls its block from every peer's scratch (its rows, back in permuted
// order); a second barrier keeps the scratch unwritten until every peer has read it; then
// it routes its tokens and sums bf16(weight * row) in expert order, weights in bf16.
#include <kf/host.h>
#include <kf/kf.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

kf::host::Barrier g_sync;          // see <kf/host.h>
uint16_t* g_send = nullptr;        // [world * S(world - 1), N] bf16, by source rank
std::vector<uint16_t> g_received;  // [R, N] bf16, in permuted order

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

// send row s*size + l*chunk + j = x row world*l*chunk + s*n(l) + j.
void unsort(const uint16_t* x, uint16_t* send, int64_t size, int64_t local, int64_t world,
            int64_t n) {
  const int64_t chunk = size / local;
  for (int64_t l = 0; l < local; ++l) {
    const int64_t count = l == local - 1 ? size - (local - 1) * chunk : chunk;
    for (int64_t s = 0; s < world; ++s)
      std::memcpy(send + (s * size + l * chunk) * n, x + (world * l * chunk + s * count) * n,
                  static_cast<size_t>(count * n) * sizeof(uint16_t));
  }
}

// y[t] = sum over the topk experts x of token t (highest logit, ties to the lower index),
// in expert order, of bf16(bf16(w(t, x)) * row p(t, x) of `received`).
void combine(const float* logits, const uint16_t* received, uint16_t* y, int64_t m, int64_t n,
             int e, int topk) {
  std::vector<uint8_t> map(static_cast<size_t>(e * m), 0);
  std::vector<float> weight(static_cast<size_t>(e * m), 0.0f);
  for (int64_t t = 0; t < m; ++t) {
    const float* row = logits + t * e;
    int top = -1;
    for (int k = 0; k < topk; ++k) {
      int best = -1;
      for (int x = 0; x < e; ++x)
        if (!map[x * m + t] && (best < 0 || row[x] > row[best])) best = x;
      map[best * m + t] = 1;
      if (k == 0) top = best;
    }
    float sum = 0.0f;
    for (int x = 0; x < e; ++x)
      if (map[x * m + t]) sum += std::exp(row[x] - row[top]);
    for (int x = 0; x < e; ++x)
      if (map[x * m + t])
        weight[x * m + t] = bf16_to_float(float_to_bf16(std::exp(row[x] - row[top]) / sum));
  }
  std::vector<float> acc(static_cast<size_t>(m * n), 0.0f);
  int64_t p = 0;  // positions in (expert, token) order
  for (int64_t f = 0; f < e * m; ++f) {
    if (!map[f]) continue;
    const int64_t t = f % m;
    for (int64_t k = 0; k < n; ++k)
      acc[t * n + k] +=
          bf16_to_float(float_to_bf16(weight[f] * bf16_to_float(received[p * n + k])));
    ++p;
  }
  for (int64_t i = 0; i < m * n; ++i) y[i] = float_to_bf16(acc[i]);
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const int64_t rows = t["logits"].shape[0] * t.iparam("topk"), n = t["y"].shape[1];
  const int64_t last = rows - (comm.world - 1) * (rows / comm.world);  // S(world - 1)
  const bool synced = g_sync.setup(comm);
  g_send = comm.alloc_array<uint16_t>(static_cast<size_t>(comm.world * last * n));
  g_received.assign(static_cast<size_t>(rows * n), 0);
  return synced && g_send ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  const kf::Tensor& logits = t["logits"];
  const int64_t m = logits.shape[0], n = x.shape[1], world = comm.world;
  const int e = static_cast<int>(t.iparam("E")), topk = static_cast<int>(t.iparam("topk"));
  const int64_t rows = m * topk, q = rows / world;
  unsort(x.ptr<const uint16_t>(), g_send, x.shape[0] / world, e / world, world, n);
  g_sync.wait(comm);  // every rank's rows are in its scratch, by source rank
  for (int64_t d = 0; d < world; ++d) {
    const int64_t size = d == world - 1 ? rows - (world - 1) * q : q;
    std::memcpy(g_received.data() + d * q * n,
                comm.peer(g_send, static_cast<int>(d)) + comm.rank * size * n,
                static_cast<size_t>(size * n) * sizeof(uint16_t));
  }
  g_sync.wait(comm);  // nobody rewrites its scratch while a peer still reads it
  combine(logits.ptr<const float>(), g_received.data(), t["y"].ptr<uint16_t>(), m, n, e, topk);
  return 0;
}
