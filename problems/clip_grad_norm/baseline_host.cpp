// clip_grad_norm on the host backend: the baseline's semantics in plain C++ over the
// symmetric heap. Each rank takes the fp32 2-norm of each of g0, g1, g2 (a float per row,
// the rows added in float), squares it and adds the three in float, as PyTorch's
// torch.norm(g.float()) ** 2 summed; writes that into its scratch; after a barrier it
// all-reduces by adding every rank's value in rank order (the same bits everywhere), takes
// the square root and, if it exceeds max_norm, scales each gradient by the fp32 coef
// max_norm / norm, rounding once to bf16 (mul_ of a bf16 tensor by an fp32 scalar). A
// second barrier keeps every rank's value unchanged until every peer has read it.
#include <kf/host.h>
#include <kf/kf.h>

#include <cmath>
#include <cstdint>

namespace {

kf::host::Barrier g_sync;  // see <kf/host.h>
float* g_local = nullptr;  // [1]: this rank's sum of the three squared norms

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

// torch.norm(g.float(), p=2) of an [m, n] tensor, in float.
float norm_of(const uint16_t* g, int64_t m, int64_t n) {
  float total = 0;
  for (int64_t i = 0; i < m; ++i) {
    float row = 0;
    for (int64_t j = 0; j < n; ++j) {
      const float v = bf16_to_float(g[i * n + j]);
      row += v * v;
    }
    total += row;
  }
  return std::sqrt(total);
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  const bool synced = g_sync.setup(comm);
  g_local = comm.alloc_array<float>(1);
  return synced && g_local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const char* grads[3] = {"g0", "g1", "g2"};
  const char* outs[3] = {"y0", "y1", "y2"};
  const int64_t m = t["g0"].shape[0], n = t["g0"].shape[1];
  float acc = 0;
  for (const char* g : grads) {
    const float gn = norm_of(t[g].ptr<const uint16_t>(), m, n);
    acc += gn * gn;
  }
  *g_local = acc;
  g_sync.wait(comm);  // every rank's value is this call's
  float total_p = 0;
  for (int r = 0; r < comm.world; ++r) total_p += *comm.peer(g_local, r);
  const float norm = std::sqrt(total_p);
  const float max_norm = static_cast<float>(t.param("max_norm"));
  const bool clip = norm > max_norm;  // PyTorch's `if total_norm > max_norm`
  const float coef = clip ? max_norm / norm : 1.0f;
  for (int k = 0; k < 3; ++k) {
    const uint16_t* g = t[grads[k]].ptr<const uint16_t>();
    uint16_t* y = t[outs[k]].ptr<uint16_t>();
    for (int64_t e = 0; e < m * n; ++e)
      y[e] = clip ? float_to_bf16(bf16_to_float(g[e]) * coef) : g[e];
  }
  *t["norm"].ptr<float>() = norm;
  g_sync.wait(comm);  // nobody rewrites its value while a peer still reads it
  return 0;
}
