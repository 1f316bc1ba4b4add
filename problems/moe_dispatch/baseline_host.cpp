// moe_dispatch on the host backend: the baseline's semantics in plain C++ over the
// symmetric heap. Each rank routes its tokens (routing_map, perm) and gathers its rows
// in expert order into a heap scratch; after a barrier rank r pulls rows [r*q, r*q +
// S(r)) of every peer's scratch and writes them regrouped by local expert into y; a
// second barrier keeps the scratch unwritten until every peer has read it.
#include <kf/host.h>
#include <kf/kf.h>

#include <cstdint>
#include <cstring>

namespace {

kf::host::Barrier g_sync;        // see <kf/host.h>
uint16_t* g_permuted = nullptr;  // [R, N] bf16

// map[x][t] = 1 for the topk experts of token t (highest logit, ties to the lower index),
// and perm = the tokens of the set entries in (expert, token) order.
void route(const float* logits, int64_t m, int e, int topk, uint8_t* map, int32_t* perm) {
  std::memset(map, 0, static_cast<size_t>(e * m));
  for (int64_t t = 0; t < m; ++t)
    for (int k = 0; k < topk; ++k) {
      int best = -1;
      for (int x = 0; x < e; ++x)
        if (!map[x * m + t] && (best < 0 || logits[t * e + x] > logits[t * e + best])) best = x;
      map[best * m + t] = 1;
    }
  int32_t p = 0;
  for (int64_t f = 0; f < e * m; ++f)
    if (map[f]) perm[p++] = static_cast<int32_t>(f % m);
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  g_permuted = comm.alloc_array<uint16_t>(static_cast<size_t>(t["perm"].numel * t["x"].shape[1]));
  return synced && g_permuted ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  kf::Tensor& perm = t["perm"];
  const int64_t m = x.shape[0], n = x.shape[1], rows = perm.numel, world = comm.world;
  const int e = static_cast<int>(t.iparam("E")), topk = static_cast<int>(t.iparam("topk"));
  route(t["logits"].ptr<const float>(), m, e, topk, t["routing_map"].ptr<uint8_t>(),
        perm.ptr<int32_t>());
  const size_t row_bytes = static_cast<size_t>(n) * sizeof(uint16_t);
  for (int64_t p = 0; p < rows; ++p)
    std::memcpy(g_permuted + p * n, x.ptr<const uint16_t>() + perm.ptr<const int32_t>()[p] * n,
                row_bytes);
  g_sync.wait(comm);  // every rank's permuted rows are in its scratch
  const int64_t q = rows / world, size = y.shape[0] / world, local = e / world;
  const int64_t chunk = size / local;
  for (int s = 0; s < world; ++s) {
    const uint16_t* src = comm.peer(g_permuted, s) + comm.rank * q * n;
    for (int64_t l = 0; l < local; ++l) {
      const int64_t count = l == local - 1 ? size - (local - 1) * chunk : chunk;
      std::memcpy(y.ptr<uint16_t>() + (world * l * chunk + s * count) * n, src + l * chunk * n,
                  static_cast<size_t>(count) * row_bytes);
    }
  }
  g_sync.wait(comm);  // nobody rewrites its scratch while a peer still reads it
  return 0;
}
