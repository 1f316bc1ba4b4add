// Fault (problem reduce_scatter_rmsnorm, host backend):
// problems/reduce_scatter_rmsnorm/examples/host.cpp with one planted bug: an off-by-one in
// the row loop leaves the last row of the share unwritten (it keeps the sandbox's poison),
// at every world size. Verdict: mismatch (tests/problems_test.cpp).
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
  g_sync.wait(comm);                        // every peer's inputs are ready
  for (int64_t i = 0; i + 1 < rows; ++i) {  // the bug: one row short
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
