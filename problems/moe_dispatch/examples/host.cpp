// A simple correct host candidate for moe_dispatch, push style: each rank routes its
// tokens (routing_map, perm); once every rank has entered the call (so every peer's y is
// ready for this call's rows), rank s writes, for every destination d, rows [d*q, d*q +
// S(d)) of its permuted tokens straight from x into d's y, at d's slot for (local expert,
// rank s); a second barrier waits until every row of our y has arrived.
#include <kf/host.h>
#include <kf/kf.h>

#include <cstdint>
#include <cstring>

namespace {

kf::host::Barrier g_sync;  // see <kf/host.h>

// The topk experts of token t into map[x][t] (highest logit, ties to the lower index).
void route_token(const float* logits, int64_t t, int64_t m, int e, int topk, uint8_t* map) {
  for (int x = 0; x < e; ++x) map[x * m + t] = 0;
  for (int k = 0; k < topk; ++k) {
    int best = -1;
    for (int x = 0; x < e; ++x)
      if (!map[x * m + t] && (best < 0 || logits[t * e + x] > logits[t * e + best])) best = x;
    map[best * m + t] = 1;
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  return g_sync.setup(comm) ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& perm_t = t["perm"];
  const int64_t m = x.shape[0], n = x.shape[1], rows = perm_t.numel, world = comm.world;
  const int e = static_cast<int>(t.iparam("E")), topk = static_cast<int>(t.iparam("topk"));
  uint8_t* map = t["routing_map"].ptr<uint8_t>();
  int32_t* perm = perm_t.ptr<int32_t>();
  for (int64_t tok = 0; tok < m; ++tok)
    route_token(t["logits"].ptr<const float>(), tok, m, e, topk, map);
  int64_t p = 0;
  for (int64_t f = 0; f < e * m; ++f)
    if (map[f]) perm[p++] = static_cast<int32_t>(f % m);
  g_sync.wait(comm);  // every peer's y is ready for this call's rows
  const int64_t q = rows / world, local = e / world;
  const size_t row_bytes = static_cast<size_t>(n) * sizeof(uint16_t);
  for (int64_t d = 0; d < world; ++d) {
    const int64_t size = d == world - 1 ? rows - (world - 1) * q : q, chunk = size / local;
    uint16_t* dst = comm.peer(t["y"].ptr<uint16_t>(), static_cast<int>(d));
    for (int64_t l = 0; l < local; ++l) {
      const int64_t count = l == local - 1 ? size - (local - 1) * chunk : chunk;
      for (int64_t j = 0; j < count; ++j)
        std::memcpy(dst + (world * l * chunk + comm.rank * count + j) * n,
                    x.ptr<const uint16_t>() + perm[d * q + l * chunk + j] * n, row_bytes);
    }
  }
  g_sync.wait(comm);  // every rank's rows have arrived in our y
  return 0;
}
