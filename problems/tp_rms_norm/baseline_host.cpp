// tp_rms_norm on the host backend: the baseline's semantics in plain C++ over the
// symmetric heap. Each rank sums its rows' squares in float into its scratch; a barrier
// stands for the all-reduce, after which every rank adds up every rank's sums in float
// in rank order (the same bits on every rank, as NCCL's all-reduce gives), divides by
// world * N, and writes y rounding to bf16 where PyTorch does: x * rsqrt(var + eps),
// then weight times that. A second barrier keeps every rank's sums unchanged until every
// peer has read them.
#include <kf/host.h>
#include <kf/kf.h>

#include <cmath>
#include <cstdint>

namespace {

kf::host::Barrier g_sync;  // see <kf/host.h>
float* g_ss = nullptr;     // [M]: this rank's sum of squares of each row

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

float round_bf16(float v) {
  return bf16_to_float(float_to_bf16(v));
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  g_ss = comm.alloc_array<float>(static_cast<size_t>(t["x"].shape[0]));
  return synced && g_ss ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  const int64_t m = x.shape[0], n = x.shape[1];
  const uint16_t* px = x.ptr<const uint16_t>();
  const uint16_t* w = t["weight"].ptr<const uint16_t>();
  uint16_t* y = t["y"].ptr<uint16_t>();
  const float columns = static_cast<float>(static_cast<int64_t>(comm.world) * n);
  const float eps = static_cast<float>(t.param("eps"));
  for (int64_t i = 0; i < m; ++i) {
    float s = 0.0f;
    for (int64_t j = 0; j < n; ++j) {
      const float v = bf16_to_float(px[i * n + j]);
      s += v * v;
    }
    g_ss[i] = s;
  }
  g_sync.wait(comm);  // every rank's sums are written
  for (int64_t i = 0; i < m; ++i) {
    float s = 0.0f;
    for (int r = 0; r < comm.world; ++r) s += comm.peer(g_ss, r)[i];
    const float inv_rms = 1.0f / std::sqrt(s / columns + eps);
    for (int64_t j = 0; j < n; ++j) {
      const float xs = round_bf16(bf16_to_float(px[i * n + j]) * inv_rms);
      y[i * n + j] = float_to_bf16(bf16_to_float(w[j]) * xs);
    }
  }
  g_sync.wait(comm);  // nobody rewrites its sums while a peer still reads them
  return 0;
}
