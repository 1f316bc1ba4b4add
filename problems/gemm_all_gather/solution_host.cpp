// gemm_all_gather on the host backend, with the knobs of kforge's template search:
// every rank's c = [a(0) @ b(0) | ... | a(w-1) @ b(w-1)], each piece in float rounded
// once to bf16, then gathered (unfused: the GEMM, then the exchange).
// pull: compute our piece straight into our column block of c, barrier (every block is
// in its c), copy every peer's block out of the peer's c, barrier (nobody's c is poisoned
// for the next call while a peer still reads it).
// push: compute our piece into our slot of a staging buffer, write it into slot `rank`
// of every peer's staging buffer (safe before any barrier, see g_slots), barrier, lay our
// slots side by side into c. One barrier per call: the staging buffer alternates halves
// by call, so a peer one call ahead writes the other half.
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cstdint>
#include <vector>

// Knobs (kforge's template search sets them with #defines in front): who moves the bytes
// (pull: read the peers' blocks; push: write into the peers' staging buffers) and how many
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
constexpr size_t kStep = static_cast<size_t>(KF_CHUNK_ELEMS) * sizeof(uint16_t);
static_assert(KF_CHUNK_ELEMS > 0, "KF_CHUNK_ELEMS must be positive");

kf::host::Barrier g_sync;  // see <kf/host.h>
// push: [2][world][M, N/w] bf16, slot s of half h holding rank s's piece of the calls of
// parity h. A peer writes half h in call n + 2 only after the barrier of call n + 1, which
// we pass only after reading half h in call n.
uint16_t* g_slots = nullptr;
uint64_t g_calls = 0;  // kf_run calls so far, the same count on every rank

using kf::host::bf16_to_float;
using kf::host::chunked_copy;
using kf::host::float_to_bf16;

// dst[i][j] (row stride ldd) = sum over kk of a[i][kk] * b[kk][j], a [m, k] and b [k, nl]
// bf16, accumulating in float and rounding once.
void matmul(uint16_t* dst, int64_t ldd, const uint16_t* a, const uint16_t* b, int64_t m, int64_t k,
            int64_t nl) {
  std::vector<float> row(static_cast<size_t>(nl));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0f);
    for (int64_t kk = 0; kk < k; ++kk) {
      const float aik = bf16_to_float(a[i * k + kk]);
      for (int64_t j = 0; j < nl; ++j) row[j] += aik * bf16_to_float(b[kk * nl + j]);
    }
    for (int64_t j = 0; j < nl; ++j) dst[i * ldd + j] = float_to_bf16(row[j]);
  }
}

// m rows of nl elements, from src (row stride lds) to dst (row stride ldd).
void copy_rows(uint16_t* dst, int64_t ldd, const uint16_t* src, int64_t lds, int64_t m,
               int64_t nl) {
  for (int64_t i = 0; i < m; ++i)
    chunked_copy(reinterpret_cast<char*>(dst + i * ldd),
                 reinterpret_cast<const char*>(src + i * lds), static_cast<size_t>(nl) * 2, kStep);
}

// The matrices of one call: a [m, k], b [k, nl], c [m, nl * world].
struct Call {
  const uint16_t* a;
  const uint16_t* b;
  uint16_t* c;
  int64_t m, k, nl, n;
};

Call call_of(const kf::Comm& comm, const kf::Tensors& t) {
  Call x;
  x.a = t["a"].ptr<const uint16_t>();
  x.b = t["b"].ptr<const uint16_t>();
  x.c = t["c"].ptr<uint16_t>();
  x.m = t["a"].shape[0];
  x.k = t["a"].shape[1];
  x.nl = t["b"].shape[1];
  x.n = x.nl * comm.world;
  return x;
}

void pull(const kf::Comm& comm, const Call& x) {
  matmul(x.c + comm.rank * x.nl, x.n, x.a, x.b, x.m, x.k, x.nl);
  g_sync.wait(comm);  // every rank's block is in its c
  const uint16_t* c = x.c;
  for (int d = 1; d < comm.world; ++d) {  // peers, starting after us
    const int s = (comm.rank + d) % comm.world;
    copy_rows(x.c + s * x.nl, x.n, comm.peer(c, s) + s * x.nl, x.n, x.m, x.nl);
  }
  g_sync.wait(comm);  // nobody's c is poisoned while a peer still reads it
}

void push(const kf::Comm& comm, const Call& x) {
  const int64_t piece = x.m * x.nl;
  uint16_t* half = g_slots + (g_calls++ % 2) * comm.world * piece;
  uint16_t* mine = half + comm.rank * piece;
  matmul(mine, x.nl, x.a, x.b, x.m, x.k, x.nl);
  for (int d = 1; d < comm.world; ++d) {  // peers, starting after us
    const int r = (comm.rank + d) % comm.world;
    chunked_copy(reinterpret_cast<char*>(comm.peer(half, r) + comm.rank * piece),
                 reinterpret_cast<const char*>(mine), static_cast<size_t>(piece) * 2, kStep);
  }
  g_sync.wait(comm);  // every slot of this half of ours is written
  for (int s = 0; s < comm.world; ++s)
    copy_rows(x.c + s * x.nl, x.n, half + s * piece, x.nl, x.m, x.nl);
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  if (kAlgo == algo::push) g_slots = comm.alloc_array<uint16_t>(2 * t["c"].numel);
  return synced && (kAlgo == algo::pull || g_slots) ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const Call x = call_of(comm, t);
  if (kAlgo == algo::pull)
    pull(comm, x);
  else
    push(comm, x);
  return 0;
}
