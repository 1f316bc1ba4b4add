// all_gather_gemm on the host backend, with the knobs of kforge's template search:
// c(rank r) = [a(0) | ... | a(w-1)] @ b(r), in float, rounded once to bf16.
// pull: after a barrier (every a is ready), copy every rank's a into slot s of our gather
// buffer. push: copy our a into slot `rank` of every rank's gather buffer (safe before
// any barrier: the last call's final barrier came after every product), then a barrier.
// Either way we then multiply our gather buffer, shard by shard, by the rows of b that
// shard meets, and a final barrier keeps every input and buffer until all are done.
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cstdint>
#include <vector>

// Knobs (kforge's template search sets them with #defines in front): who moves the bytes
// (pull: read the peers' shards; push: write into the peers' buffers) and how many
// elements one copy step handles. Every value is correct; they change the access pattern.
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

kf::host::Barrier g_sync;      // see <kf/host.h>
uint16_t* g_gather = nullptr;  // [world][M, K/world]: slot s holds rank s's a
using kf::host::bf16_to_float;
using kf::host::chunked_copy;
using kf::host::float_to_bf16;

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  g_gather = comm.alloc_array<uint16_t>(static_cast<size_t>(t["a"].numel) * comm.world);
  return synced && g_gather ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& a = t["a"];
  const kf::Tensor& b = t["b"];
  const int64_t m = a.shape[0], kl = a.shape[1], n = b.shape[1];
  const size_t bytes = a.bytes();
  char* gather = reinterpret_cast<char*>(g_gather);
  if (kAlgo == algo::pull) g_sync.wait(comm);  // every a is ready
  for (int k = 1; k <= comm.world; ++k) {      // peers first, starting after us
    const int s = (comm.rank + k) % comm.world;
    if (kAlgo == algo::pull)
      chunked_copy(gather + static_cast<size_t>(s) * bytes, comm.peer(a.ptr<const char>(), s),
                   bytes, kChunk * 2);
    else
      chunked_copy(comm.peer(gather, s) + static_cast<size_t>(comm.rank) * bytes,
                   a.ptr<const char>(), bytes, kChunk * 2);
  }
  if (kAlgo == algo::push) g_sync.wait(comm);  // every slot of our gather buffer is written
  const uint16_t* pb = b.ptr<const uint16_t>();
  uint16_t* c = t["c"].ptr<uint16_t>();
  std::vector<float> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0f);
    for (int s = 0; s < comm.world; ++s)
      for (int64_t k = 0; k < kl; ++k) {
        const float aik = bf16_to_float(g_gather[(s * m + i) * kl + k]);
        const uint16_t* brow = pb + (s * kl + k) * n;
        for (int64_t j = 0; j < n; ++j) row[j] += aik * bf16_to_float(brow[j]);
      }
    for (int64_t j = 0; j < n; ++j) c[i * n + j] = float_to_bf16(row[j]);
  }
  g_sync.wait(comm);  // nobody rewrites an input or a gather slot a peer still uses
  return 0;
}
