// A simple correct host candidate for tp_rms_norm, the host twin of examples/uva.cu: each
// rank writes its rows' sums of squares into its scratch; once every rank has (a
// barrier), each rank adds up every peer's sums, so it has each row's sum over all
// world * N columns, and writes its own columns of y = weight * x / rms in float,
// rounding once. A second barrier keeps every rank's sums unchanged until every peer has
// read them (the next call rewrites them).
#include <kf/host.h>
#include <kf/kf.h>

#include <cmath>
#include <cstdint>

namespace {

kf::host::Barrier g_sync;    // see <kf/host.h>
float* g_squares = nullptr;  // [M]: this rank's sum of squares of each row

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  g_squares = comm.alloc_array<float>(static_cast<size_t>(t["x"].shape[0]));
  return synced && g_squares ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const int64_t m = t["x"].shape[0], n = t["x"].shape[1];
  const uint16_t* x = t["x"].ptr<const uint16_t>();
  const uint16_t* weight = t["weight"].ptr<const uint16_t>();  // our own columns' weight
  uint16_t* y = t["y"].ptr<uint16_t>();
  const float columns = static_cast<float>(comm.world) * static_cast<float>(n);  // all ranks'
  const float eps = static_cast<float>(t.param("eps"));
  for (int64_t i = 0; i < m; ++i) {
    float s = 0;
    for (int64_t j = 0; j < n; ++j) {
      const float v = bf16_to_float(x[i * n + j]);
      s += v * v;
    }
    g_squares[i] = s;
  }
  g_sync.wait(comm);  // every rank's sums are this call's
  for (int64_t i = 0; i < m; ++i) {
    float s = 0;
    for (int r = 0; r < comm.world; ++r) s += comm.peer(g_squares, r)[i];
    const float inv_rms = 1.0f / std::sqrt(s / columns + eps);
    for (int64_t j = 0; j < n; ++j)
      y[i * n + j] =
          float_to_bf16(bf16_to_float(x[i * n + j]) * inv_rms * bf16_to_float(weight[j]));
  }
  g_sync.wait(comm);  // nobody rewrites its sums while a peer still reads them
  return 0;
}
