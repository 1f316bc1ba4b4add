// A simple correct host candidate for reduce_scatter_rmsnorm, the host twin of
// examples/uva.cu: once every rank has entered the call (its x, and rank 0's gamma, are
// this call's), each rank averages its share of every peer's x in float, normalizes each
// row and scales it by rank 0's gamma; a second barrier keeps every x and rank 0's gamma
// unchanged until every peer has read them.
#include <kf/host.h>
#include <kf/kf.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

kf::host::Barrier g_sync;  // see <kf/host.h>

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  return g_sync.setup(comm) ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  uint16_t* y = t["y"].ptr<uint16_t>();
  const int64_t rows = t["y"].shape[0], hidden = t["y"].shape[1];
  const int64_t first = comm.rank * rows * hidden;  // our chunk, in every rank's x
  const float eps = static_cast<float>(t.param("eps"));
  const uint16_t* x = t["x"].ptr<const uint16_t>();
  const uint16_t* gamma = comm.peer(t["gamma"].ptr<const uint16_t>(), 0);  // rank 0's
  std::vector<float> m(static_cast<size_t>(hidden));
  g_sync.wait(comm);  // every peer's inputs are ready
  for (int64_t i = 0; i < rows; ++i) {
    float squares = 0;
    for (int64_t j = 0; j < hidden; ++j) {
      float s = 0;
      for (int r = 0; r < comm.world; ++r)
        s += bf16_to_float(comm.peer(x, r)[first + i * hidden + j]);
      m[j] = s / static_cast<float>(comm.world);
      squares += m[j] * m[j];
    }
    const float inv_rms = 1.0f / std::sqrt(squares / static_cast<float>(hidden) + eps);
    for (int64_t j = 0; j < hidden; ++j)
      y[i * hidden + j] = float_to_bf16(m[j] * inv_rms * bf16_to_float(gamma[j]));
  }
  g_sync.wait(comm);  // nobody regenerates its inputs while a peer still reads them
  return 0;
}
