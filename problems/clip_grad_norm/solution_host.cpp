// clip_grad_norm on the host backend, with the knobs of kforge's template search: each rank
// sums the squares of its g0, g1, g2 (float within a chunk, chunks added in double), the
// one value is all-reduced (in rank order: the same bits on every rank), and each rank
// writes its gradients times max_norm / norm (when the norm exceeds it), rounding once.
// pull: write our sum into our scratch, barrier, read every peer's.
// push: write our sum into slot `rank` of every peer's staging buffer, barrier, add up our
// slots.
// One barrier per call, not two: the sums alternate between two buffers by the parity of
// the call. A rank writes buffer p in call k + 2 only after passing call k + 1's barrier,
// which every peer reaches only after it is done reading buffer p in call k.
#include <kf/host.h>
#include <kf/kf.h>

#include <cmath>
#include <cstdint>

// Knobs (kforge's template search sets them with #defines in front): who moves the sums
// (pull: read the peers' scratch; push: write into the peers' buffers) and how many
// elements one step of the sum of squares and of the scaling handles. Every value is
// correct; they change the access pattern.
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
// Two buffers (by call parity) of: pull: our sum; push: world slots, slot s rank s's sum.
double* g_buf = nullptr;
size_t g_slots = 1;  // sums per parity: 1 (pull) or world (push)
uint64_t g_calls = 0;

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

// The sum of g[e]^2 for e < n: a float per chunk, the chunks added in double.
double squares_of(const uint16_t* g, size_t n) {
  double total = 0;
  for (size_t b = 0; b < n; b += kChunk) {
    float s = 0;
    for (size_t e = b; e < n && e < b + kChunk; ++e) {
      const float v = bf16_to_float(g[e]);
      s += v * v;
    }
    total += s;
  }
  return total;
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  const bool synced = g_sync.setup(comm);
  g_slots = kAlgo == algo::push ? static_cast<size_t>(comm.world) : 1;
  g_buf = comm.alloc_array<double>(2 * g_slots);
  return synced && g_buf ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const char* grads[3] = {"g0", "g1", "g2"};
  const char* outs[3] = {"y0", "y1", "y2"};
  const size_t n = static_cast<size_t>(t["g0"].numel);
  double* buf = g_buf + (g_calls++ % 2) * g_slots;  // this call's parity
  double local = 0;
  for (const char* g : grads) local += squares_of(t[g].ptr<const uint16_t>(), n);
  if (kAlgo == algo::push) {
    for (int k = 0; k < comm.world; ++k) {  // us first, then the peers after us
      const int d = (comm.rank + k) % comm.world;
      *comm.peer(buf + comm.rank, d) = local;
    }
  } else {
    *buf = local;
  }
  g_sync.wait(comm);  // pull: every rank's sum is written; push: every slot of ours is
  double total = 0;
  for (int r = 0; r < comm.world; ++r) total += kAlgo == algo::push ? buf[r] : *comm.peer(buf, r);
  const float norm = static_cast<float>(std::sqrt(total));
  const float max_norm = static_cast<float>(t.param("max_norm"));
  const float coef = norm > max_norm ? max_norm / norm : 1.0f;
  for (int k = 0; k < 3; ++k) {
    const uint16_t* g = t[grads[k]].ptr<const uint16_t>();
    uint16_t* y = t[outs[k]].ptr<uint16_t>();
    for (size_t b = 0; b < n; b += kChunk)
      for (size_t e = b; e < n && e < b + kChunk; ++e)
        y[e] = float_to_bf16(bf16_to_float(g[e]) * coef);
  }
  *t["norm"].ptr<float>() = norm;
  return 0;
}
