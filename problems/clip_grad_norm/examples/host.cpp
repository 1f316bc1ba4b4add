// A simple correct host candidate for clip_grad_norm, the host twin of examples/uva.cu:
// each rank sums the squares of its g0, g1, g2 in float, a row at a time, and writes that
// one value into its scratch; once every rank has (a barrier), each rank adds up every
// peer's value in rank order (the same bits on every rank), takes the square root and
// writes its gradients times max_norm / norm (when the norm exceeds max_norm) rounded once
// to bf16. A second barrier keeps every rank's value unchanged until every peer has read
// it (the next call rewrites it).
#include <kf/host.h>
#include <kf/kf.h>

#include <cmath>
#include <cstdint>

namespace {

kf::host::Barrier g_sync;    // see <kf/host.h>
float* g_squares = nullptr;  // [1]: this rank's sum of squares

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

// The sum of g[e]^2 over an [m, n] tensor: a float per row, the rows added in float, so no
// running sum grows much larger than the terms it adds.
float squares_of(const uint16_t* g, int64_t m, int64_t n) {
  float total = 0;
  for (int64_t i = 0; i < m; ++i) {
    float row = 0;
    for (int64_t j = 0; j < n; ++j) {
      const float v = bf16_to_float(g[i * n + j]);
      row += v * v;
    }
    total += row;
  }
  return total;
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  const bool synced = g_sync.setup(comm);
  g_squares = comm.alloc_array<float>(1);
  return synced && g_squares ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const char* grads[3] = {"g0", "g1", "g2"};
  const char* outs[3] = {"y0", "y1", "y2"};
  const int64_t m = t["g0"].shape[0], n = t["g0"].shape[1];
  float local = 0;
  for (const char* g : grads) local += squares_of(t[g].ptr<const uint16_t>(), m, n);
  *g_squares = local;
  g_sync.wait(comm);  // every rank's sum is this call's
  float total = 0;
  for (int r = 0; r < comm.world; ++r) total += *comm.peer(g_squares, r);
  const float norm = std::sqrt(total);
  const float max_norm = static_cast<float>(t.param("max_norm"));
  const float coef = norm > max_norm ? max_norm / norm : 1.0f;
  for (int k = 0; k < 3; ++k) {
    const uint16_t* g = t[grads[k]].ptr<const uint16_t>();
    uint16_t* y = t[outs[k]].ptr<uint16_t>();
    for (int64_t e = 0; e < m * n; ++e) y[e] = float_to_bf16(bf16_to_float(g[e]) * coef);
  }
  *t["norm"].ptr<float>() = norm;
  g_sync.wait(comm);  // nobody rewrites its sum while a peer still reads it
  return 0;
}
