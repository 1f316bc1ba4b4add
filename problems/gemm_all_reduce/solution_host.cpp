// gemm_all_reduce on the host backend, with the knobs of kforge's template search: every
// rank's c = sum over ranks s of a(s) @ b(s). Each partial product is computed in float
// and rounded to bf16 (torch.matmul's output), the partials are summed in float in rank
// order and rounded once: the same bits on every rank, in either family.
// pull (one-shot): compute our partial into our scratch, barrier, sum every rank's whole
// scratch, barrier (nobody rewrites a scratch a peer still reads). Writing our scratch
// before any barrier is safe: every peer finished reading it before the last call's
// final barrier.
// push (two-shot): rows [o*M/w, (o+1)*M/w) of c belong to rank o. Compute the rows of
// our partial in block o and write them straight into slot `rank` of o's staging buffer,
// peers first (safe before any barrier: o summed its staging before the last call's final
// barrier), barrier, sum our slots into our block of c and copy that block into every
// peer's c (safe after the first barrier: the peer has entered this call, so its c is
// this call's output), barrier (no rank returns before its c is whole, and no staging is
// rewritten while its owner still sums it). Each rank sends 2(w-1)/w of c instead of
// (w-1) times c.
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cstdint>
#include <vector>

// Knobs (kforge's template search sets them with #defines in front): how the partials
// move (pull: one-shot, read every peer's partial; push: two-shot, write row blocks into
// their owners' buffers, then the owners' sums into every c) and how many elements one
// summing or copy step handles. Every value is correct; they change the access pattern.
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
uint16_t* g_buf = nullptr;  // pull: our [M, N] partial; push: world slots of ceil(M/w) rows
std::vector<float> g_b;     // b as float, converted once per call

using kf::host::bf16_to_float;
using kf::host::chunked_copy;
using kf::host::float_to_bf16;

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// First row of rank o's block of c: blocks differ by at most one row when w does not
// divide M.
int64_t block_start(int64_t m, int o, int world) {
  return m * o / world;
}

// p = a @ b for `m` rows of a [.., k] (bf16) and b [k, n] (as float), into p [m, n]
// rounded to bf16; each row of p is accumulated in float, k in order.
void matmul(uint16_t* p, const uint16_t* a, const float* b, int64_t m, int64_t k, int64_t n) {
  std::vector<float> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0f);
    for (int64_t kk = 0; kk < k; ++kk) {
      const float aik = bf16_to_float(a[i * k + kk]);
      const float* brow = b + kk * n;
      for (int64_t j = 0; j < n; ++j) row[j] += aik * brow[j];
    }
    for (int64_t j = 0; j < n; ++j) p[i * n + j] = float_to_bf16(row[j]);
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  const int64_t m = t["c"].shape[0], n = t["c"].shape[1];
  const int64_t rows = kAlgo == algo::push ? comm.world * ceil_div(m, comm.world) : m;
  g_buf = comm.alloc_array<uint16_t>(static_cast<size_t>(rows * n));
  return synced && g_buf ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& a = t["a"];
  const kf::Tensor& b = t["b"];
  uint16_t* c = t["c"].ptr<uint16_t>();
  const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  const uint16_t* pa = a.ptr<const uint16_t>();
  g_b.resize(static_cast<size_t>(k * n));
  for (int64_t e = 0; e < k * n; ++e) g_b[e] = bf16_to_float(b.ptr<const uint16_t>()[e]);
  std::vector<const void*> src(static_cast<size_t>(comm.world));
  if (kAlgo == algo::pull) {
    matmul(g_buf, pa, g_b.data(), m, k, n);
    g_sync.wait(comm);  // every partial is ready
    for (int r = 0; r < comm.world; ++r) src[r] = comm.peer(g_buf, r);
    kf::host::sum_slots(c, src.data(), comm.world, static_cast<size_t>(m * n), true, kChunk);
    g_sync.wait(comm);  // nobody rewrites its partial while a peer still reads it
    return 0;
  }
  const int64_t slot = ceil_div(m, comm.world) * n;  // elements of one staging slot
  for (int s = 1; s <= comm.world; ++s) {            // peers first, starting after us
    const int o = (comm.rank + s) % comm.world;
    const int64_t first = block_start(m, o, comm.world);
    matmul(comm.peer(g_buf, o) + comm.rank * slot, pa + first * k, g_b.data(),
           block_start(m, o + 1, comm.world) - first, k, n);
  }
  g_sync.wait(comm);  // every slot of our staging is written; every peer is in this call
  const int64_t first = block_start(m, comm.rank, comm.world);
  const int64_t count = (block_start(m, comm.rank + 1, comm.world) - first) * n;
  for (int r = 0; r < comm.world; ++r) src[r] = g_buf + r * slot;
  kf::host::sum_slots(c + first * n, src.data(), comm.world, static_cast<size_t>(count), true,
                      kChunk);
  for (int s = 1; s < comm.world; ++s) {  // our block of the sum into every peer's c
    const int o = (comm.rank + s) % comm.world;
    chunked_copy(reinterpret_cast<char*>(comm.peer(c, o) + first * n),
                 reinterpret_cast<const char*>(c + first * n), static_cast<size_t>(count) * 2,
                 kChunk * 2);
  }
  g_sync.wait(comm);  // every block of every c is written; our staging is summed
  return 0;
}
