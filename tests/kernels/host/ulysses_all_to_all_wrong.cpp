// Fault (problem ulysses_all_to_all, host backend): problems/ulysses_all_to_all/examples/host.cpp
// with one planted bug: each row segment is copied with N - 1 elements (an off-by-one in
// the byte count), so the last column of every segment of y keeps its poison, at every
// world size. Verdict: mismatch (tests/problems_test.cpp).
#include <kf/host.h>
#include <kf/kf.h>

#include <cstdint>
#include <cstring>

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
  const uint16_t* src = x.ptr<const uint16_t>();
  g_sync.wait(comm);  // every peer's y is ready for this call's data
  for (int p = 0; p < comm.world; ++p) {
    uint16_t* dst = comm.peer(y.ptr<uint16_t>(), p) + comm.rank * n;
    for (int64_t i = 0; i < rows; ++i)
      std::memcpy(dst + i * w * n, src + (p * rows + i) * n, static_cast<size_t>(n - 1) * 2);
  }
  g_sync.wait(comm);  // every peer's rows of our y have arrived
  return 0;
}
