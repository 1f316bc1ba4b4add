// A simple correct host candidate for ulysses_all_to_all, fused push: once every rank has
// entered the call (its y is ready for this call's data), rank r copies each row of
// piece p of its x straight into columns r*N .. r*N + N - 1 of that row of rank p's y;
// a second barrier: every row of our y has arrived.
#include <kf/host.h>
#include <kf/kf.h>

#include <cstdint>
#include <cstring>

namespace {

kf::host::Barrier g_sync;  // see <kf/host.h>

// Piece p of our x (its rows p*rows .. p*rows + rows - 1) into our n columns of every row
// of rank p's y, whose rows are w*n wide.
void push_piece(const uint16_t* src, uint16_t* dst, int64_t rows, int64_t n, int64_t w, int p) {
  for (int64_t i = 0; i < rows; ++i)
    std::memcpy(dst + i * w * n, src + (p * rows + i) * n, static_cast<size_t>(n) * 2);
}

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
  for (int p = 0; p < comm.world; ++p)
    push_piece(src, comm.peer(y.ptr<uint16_t>(), p) + comm.rank * n, rows, n, w, p);
  g_sync.wait(comm);  // every peer's rows of our y have arrived
  return 0;
}
