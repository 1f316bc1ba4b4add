// ulysses_all_to_all on the host backend, with the knobs of kforge's template search:
// y(rank r)[i][s*N + j] = x(rank s)[r*R + i][j], R = M / world. Piece p of a rank's x (R
// contiguous rows) becomes one N-wide column band of rank p's y, so every copy is R row
// segments of N elements, contiguous on the x side and w*N apart on the y side.
// pull: after a barrier (every peer has entered, so its x is this call's), copy piece r of
// every rank's x into its band of our y; a second barrier keeps our x unchanged until
// every peer has read it (the harness regenerates x the moment we return).
// push: after a barrier (every peer has entered, so the harness has already poisoned its
// y for this call and our rows will not be overwritten), copy piece p of our x into band
// r of rank p's y; a second barrier: every band of our y has arrived before we return.
// Either way the two waits of call k are the k-th pair of one counting barrier (kf/host.h),
// so nothing needs a reset between back-to-back calls, and a late rank only delays the
// others at the barrier.
#include <kf/host.h>
#include <kf/kf.h>

#include <cstdint>

// Knobs (kforge's template search sets them with #defines in front): who moves the bytes
// (pull: read the peers' x; push: write into the peers' y) and how many elements one copy
// step handles. Every value is correct; they change the access pattern.
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

kf::host::Barrier g_sync;  // see <kf/host.h>

// `rows` rows of n elements from src (packed) into dst, whose rows are `pitch` elements
// apart, kChunk elements per copy step.
void copy_rows(uint16_t* dst, int64_t pitch, const uint16_t* src, int64_t rows, int64_t n) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(uint16_t);
  for (int64_t i = 0; i < rows; ++i)
    kf::host::chunked_copy(reinterpret_cast<char*>(dst + i * pitch),
                           reinterpret_cast<const char*>(src + i * n), bytes,
                           kChunk * sizeof(uint16_t));
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  return g_sync.setup(comm) ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const int64_t w = comm.world, rows = x.shape[0] / w, n = x.shape[1], r = comm.rank;
  g_sync.wait(comm);  // pull: every x is this call's; push: every y takes this call's rows
  for (int k = 1; k <= comm.world; ++k) {  // peers first, starting after us: spread the load
    const int s = (comm.rank + k) % comm.world;
    if (kAlgo == algo::pull)  // piece r of rank s's x -> band s of our y
      copy_rows(y.ptr<uint16_t>() + s * n, w * n,
                comm.peer(x.ptr<const uint16_t>(), s) + r * rows * n, rows, n);
    else  // piece s of our x -> band r of rank s's y
      copy_rows(comm.peer(y.ptr<uint16_t>(), s) + r * n, w * n,
                x.ptr<const uint16_t>() + s * rows * n, rows, n);
  }
  g_sync.wait(comm);  // pull: nobody reads our x any more; push: our y is complete
  return 0;
}
