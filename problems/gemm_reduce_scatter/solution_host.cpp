// gemm_reduce_scatter on the host backend, with the knobs of kforge's template search:
// c(rank r) = rows [r*M/w, (r+1)*M/w) of sum over s of a(s) @ b(s); partial products in
// float rounded to bf16, summed in float in rank order.
// pull: compute our whole partial product into our scratch, barrier, sum our rows of
// every peer's scratch, barrier (nobody rewrites a scratch a peer still reads).
// push: compute the rows owner o needs and write them straight into slot `rank` of o's
// staging buffer, peers first (safe before any barrier: the last call's final barrier
// came after every sum), barrier, sum our slots, barrier.
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cstdint>
#include <vector>

// Knobs (kforge's template search sets them with #defines in front): who moves the bytes
// (pull: read the peers' partials; push: write into the owners' buffers) and how many
// elements one summing step handles. Every value is correct; they change the access
// pattern.
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

kf::host::Barrier g_sync;   // see <kf/host.h>
uint16_t* g_buf = nullptr;  // pull: our [M, N] partial; push: world slots of [M/w, N]

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

// p = a @ b for `m` rows of a [.., kl] and b [kl, n], bf16 in and out, float inside.
void matmul(uint16_t* p, const uint16_t* a, const uint16_t* b, int64_t m, int64_t kl, int64_t n) {
  std::vector<float> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0f);
    for (int64_t k = 0; k < kl; ++k) {
      const float aik = bf16_to_float(a[i * kl + k]);
      for (int64_t j = 0; j < n; ++j) row[j] += aik * bf16_to_float(b[k * n + j]);
    }
    for (int64_t j = 0; j < n; ++j) p[i * n + j] = float_to_bf16(row[j]);
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  // Either way M * N elements: our whole partial, or world slots of M / world rows.
  g_buf = comm.alloc_array<uint16_t>(static_cast<size_t>(t["a"].shape[0] * t["b"].shape[1]));
  return synced && g_buf ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& a = t["a"];
  const kf::Tensor& b = t["b"];
  const int64_t m = a.shape[0], kl = a.shape[1], n = b.shape[1], rows = m / comm.world;
  const uint16_t* pa = a.ptr<const uint16_t>();
  const uint16_t* pb = b.ptr<const uint16_t>();
  std::vector<const void*> src(static_cast<size_t>(comm.world));
  if (kAlgo == algo::push) {
    for (int k = 1; k <= comm.world; ++k) {
      const int o = (comm.rank + k) % comm.world;
      matmul(comm.peer(g_buf, o) + comm.rank * rows * n, pa + o * rows * kl, pb, rows, kl, n);
    }
    for (int r = 0; r < comm.world; ++r) src[r] = g_buf + r * rows * n;
  } else {
    matmul(g_buf, pa, pb, m, kl, n);
    for (int r = 0; r < comm.world; ++r) src[r] = comm.peer(g_buf, r) + comm.rank * rows * n;
  }
  g_sync.wait(comm);  // pull: every partial is ready; push: every slot of ours is written
  kf::host::sum_slots(t["c"].data, src.data(), comm.world, static_cast<size_t>(rows * n), true,
                      kChunk);
  g_sync.wait(comm);  // nobody rewrites what a peer still reads
  return 0;
}
