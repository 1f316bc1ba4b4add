// tp_rms_norm on the host backend, with the knobs of kforge's template search: each rank
// sums its rows' squares in float, the M sums are all-reduced (in float, in rank order:
// the same bits on every rank), and each rank writes its columns of
// y = weight * x / sqrt(S / (world * N) + eps), rounding once.
// pull: write our sums into our scratch, barrier, add up every peer's sums.
// push: write our sums into slot `rank` of every peer's staging buffer, barrier, add up
// our slots.
// One barrier per call, not two: the sums alternate between two buffers by the parity of
// the call. A rank writes buffer p in call k + 2 only after passing call k + 1's barrier,
// which every peer reaches only after it is done reading buffer p in call k, so nothing
// is overwritten while it is read, and no rank waits at the end of a call.
#include <kf/host.h>
#include <kf/kf.h>

#include <cmath>
#include <cstdint>
#include <vector>

// Knobs (kforge's template search sets them with #defines in front): who moves the sums
// (pull: read the peers' scratch; push: write into the peers' buffers) and how many sums
// one step of the copy and the reduction handles. Every value is correct; they change
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

kf::host::Barrier g_sync;  // see <kf/host.h>
// Two buffers (by call parity) of: pull: our M sums; push: world slots of M sums, slot s
// written by rank s.
float* g_buf = nullptr;
size_t g_slots = 1;  // sums buffers per parity: 1 (pull) or world (push)
uint64_t g_calls = 0;

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

// out[i] = the sum over our columns j of x[i][j]^2, in float.
void row_squares(float* out, const uint16_t* x, int64_t m, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    float s = 0;
    for (int64_t j = 0; j < n; ++j) {
      const float v = bf16_to_float(x[i * n + j]);
      s += v * v;
    }
    out[i] = s;
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  g_slots = kAlgo == algo::push ? static_cast<size_t>(comm.world) : 1;
  g_buf = comm.alloc_array<float>(2 * g_slots * static_cast<size_t>(t["x"].shape[0]));
  return synced && g_buf ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const int64_t m = t["x"].shape[0], n = t["x"].shape[1];
  const uint16_t* x = t["x"].ptr<const uint16_t>();
  const size_t rows = static_cast<size_t>(m);
  float* buf = g_buf + (g_calls++ % 2) * g_slots * rows;  // this call's parity
  std::vector<const void*> src(static_cast<size_t>(comm.world));
  if (kAlgo == algo::push) {
    float* mine = buf + static_cast<size_t>(comm.rank) * rows;  // our slot, ours to write
    row_squares(mine, x, m, n);
    for (int k = 1; k < comm.world; ++k) {  // the peers, starting after us
      const int d = (comm.rank + k) % comm.world;
      kf::host::chunked_copy(reinterpret_cast<char*>(comm.peer(mine, d)),
                             reinterpret_cast<const char*>(mine), rows * sizeof(float),
                             kChunk * sizeof(float));
    }
    for (int r = 0; r < comm.world; ++r) src[r] = buf + static_cast<size_t>(r) * rows;
  } else {
    row_squares(buf, x, m, n);
    for (int r = 0; r < comm.world; ++r) src[r] = comm.peer(buf, r);
  }
  g_sync.wait(comm);  // pull: every rank's sums are written; push: every slot of ours is
  std::vector<float> sums(rows);
  kf::host::sum_slots(sums.data(), src.data(), comm.world, rows, false, kChunk);
  const uint16_t* weight = t["weight"].ptr<const uint16_t>();
  uint16_t* y = t["y"].ptr<uint16_t>();
  const float columns = static_cast<float>(comm.world) * static_cast<float>(n);
  const float eps = static_cast<float>(t.param("eps"));
  for (int64_t i = 0; i < m; ++i) {
    const float inv_rms = 1.0f / std::sqrt(sums[i] / columns + eps);
    for (int64_t j = 0; j < n; ++j)
      y[i * n + j] =
          float_to_bf16(bf16_to_float(x[i * n + j]) * inv_rms * bf16_to_float(weight[j]));
  }
  return 0;
}
