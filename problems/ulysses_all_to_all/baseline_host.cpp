// ulysses_all_to_all on the host backend: the baseline's semantics in plain C++ over the
// symmetric heap. The all-to-all first (after a barrier, rank r copies piece r of every
// rank s's x into slot s of a staging buffer), then the cat along dim 1 (slot s's rows
// into columns s*N .. s*N + N - 1 of y); a second barrier keeps every x alive until read.
#include <kf/host.h>
#include <kf/kf.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

kf::host::Barrier g_sync;  // see <kf/host.h>

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  return g_sync.setup(comm) ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const int64_t w = comm.world, rows = x.shape[0] / w, n = x.shape[1];
  const size_t piece = static_cast<size_t>(rows * n);
  std::vector<uint16_t> stage(piece * static_cast<size_t>(w));  // [world][R][N]
  g_sync.wait(comm);                                            // every rank's x is this call's
  for (int s = 0; s < comm.world; ++s)
    std::memcpy(stage.data() + s * piece, comm.peer(x.ptr<const uint16_t>(), s) + comm.rank * piece,
                piece * sizeof(uint16_t));
  g_sync.wait(comm);  // nobody has its x regenerated while a peer still reads it
  uint16_t* out = y.ptr<uint16_t>();
  for (int64_t s = 0; s < w; ++s)
    for (int64_t i = 0; i < rows; ++i)
      std::memcpy(out + (i * w + s) * n, stage.data() + (s * rows + i) * n,
                  static_cast<size_t>(n) * sizeof(uint16_t));
  return 0;
}
