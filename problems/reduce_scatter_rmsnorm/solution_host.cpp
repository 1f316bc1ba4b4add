// reduce_scatter_rmsnorm on the host backend, with the knobs of kforge's template search:
// rank r's y = RMSNorm(m) * gamma(rank 0), where m is the mean over ranks of chunk r of
// every rank's x, summed in float in rank order, normalized in float and rounded to bf16
// once (the baseline rounds the sum and the mean to bf16 too; the tolerance allows both).
// pull: after a barrier (every x and rank 0's gamma are this call's), average chunk r of
// every peer's x straight from its heap, normalize; a second barrier keeps every x and
// rank 0's gamma unchanged until every peer has read them.
// push: copy chunk c of our x into slot `rank` of rank c's staging buffer, peers first
// (rank 0 also copies its gamma into every rank's gamma slot), barrier, then average and
// normalize from our own heap alone. One barrier is enough because the staging is double-
// buffered by call parity: a peer writes parity p's buffer in call k only before call k's
// barrier, and it enters call k + 2 (parity p again) only after call k + 1's barrier,
// which we reach only once we are done reading call k's buffer. No peer ever reads our x
// or gamma, so we may return as soon as our own y is written.
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

// Knobs (kforge's template search sets them with #defines in front): who moves the bytes
// (pull: read the peers' inputs; push: write into the peers' buffers) and how many
// elements one copy or summing step handles. Every value is correct; they change the
// access pattern.
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

kf::host::Barrier g_sync;     // see <kf/host.h>
uint16_t* g_stage = nullptr;  // push: 2 parities of [world slots of rows * hidden | gamma]
uint32_t g_calls = 0;         // push: kf_run calls so far, whose parity picks the buffer
std::vector<float> g_mean;    // [rows * hidden]: this call's mean share

using kf::host::bf16_to_float;
using kf::host::chunked_copy;
using kf::host::float_to_bf16;

// m[e] = (1/world) * sum over r of src[r][e] for e < n. Each step reads kChunk elements
// of one source after another; every element still sums its sources in rank order, so
// the result does not depend on the step.
void average(float* m, const uint16_t* const* src, int world, size_t n) {
  for (size_t b = 0; b < n; b += kChunk) {
    const size_t end = std::min(n, b + kChunk);
    std::fill(m + b, m + end, 0.0f);
    for (int r = 0; r < world; ++r)
      for (size_t e = b; e < end; ++e) m[e] += bf16_to_float(src[r][e]);
    for (size_t e = b; e < end; ++e) m[e] /= static_cast<float>(world);
  }
}

// y[i][j] = m[i][j] / sqrt(mean over j2 of m[i][j2]^2 + eps) * gamma[j], row by row.
void normalize(uint16_t* y, const float* m, const uint16_t* gamma, int64_t rows, int64_t hidden,
               float eps) {
  for (int64_t i = 0; i < rows; ++i) {
    const float* row = m + i * hidden;
    float squares = 0;
    for (int64_t j = 0; j < hidden; ++j) squares += row[j] * row[j];
    const float inv_rms = 1.0f / std::sqrt(squares / static_cast<float>(hidden) + eps);
    for (int64_t j = 0; j < hidden; ++j)
      y[i * hidden + j] = float_to_bf16(row[j] * inv_rms * bf16_to_float(gamma[j]));
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  const kf::Tensor& y = t["y"];
  g_mean.assign(static_cast<size_t>(y.numel), 0.0f);
  if (kAlgo == algo::push)  // two parities of world slots of y's size and one of gamma's
    g_stage =
        comm.alloc_array<uint16_t>(2 * static_cast<size_t>(comm.world * y.numel + y.shape[1]));
  return synced && (kAlgo == algo::pull || g_stage) ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  kf::Tensor& y = t["y"];
  const int64_t rows = y.shape[0], hidden = y.shape[1], n = rows * hidden;
  const float eps = static_cast<float>(t.param("eps"));
  const uint16_t* x = t["x"].ptr<const uint16_t>();
  std::vector<const uint16_t*> src(static_cast<size_t>(comm.world));
  const uint16_t* gamma;
  if (kAlgo == algo::push) {
    uint16_t* stage = g_stage + (g_calls++ & 1) * (comm.world * n + hidden);
    for (int k = 1; k <= comm.world; ++k) {  // peers first, starting after us
      const int c = (comm.rank + k) % comm.world;
      uint16_t* dst = comm.peer(stage, c);
      chunked_copy(reinterpret_cast<char*>(dst + comm.rank * n),
                   reinterpret_cast<const char*>(x + c * n), n * 2, kChunk * 2);
      if (comm.rank == 0)
        chunked_copy(reinterpret_cast<char*>(dst + comm.world * n), t["gamma"].ptr<const char>(),
                     hidden * 2, kChunk * 2);
    }
    for (int r = 0; r < comm.world; ++r) src[r] = stage + r * n;
    gamma = stage + comm.world * n;
  } else {
    for (int r = 0; r < comm.world; ++r) src[r] = comm.peer(x, r) + comm.rank * n;
    gamma = comm.peer(t["gamma"].ptr<const uint16_t>(), 0);
  }
  g_sync.wait(comm);  // pull: every input is this call's; push: every slot of ours is written
  average(g_mean.data(), src.data(), comm.world, static_cast<size_t>(n));
  normalize(y.ptr<uint16_t>(), g_mean.data(), gamma, rows, hidden, eps);
  if (kAlgo == algo::pull) g_sync.wait(comm);  // nobody regenerates an input a peer still reads
  return 0;
}
