// all_to_all on the host backend, with the knobs of kforge's template search:
// y(rank r)[s*n + i] = x(rank s)[r*n + i].
// pull: after a barrier (every x is ready), copy chunk r of every rank s's x into chunk s
// of our y. push: after a barrier (every y is ready for this call), copy chunk c of our x
// into chunk r of rank c's y. A final barrier either way.
#include <kf/host.h>
#include <kf/kf.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

// Knobs (kforge's template search sets them with #defines in front): who moves the bytes
// (pull: read the peers' inputs; push: write into the peers' buffers) and how many
// elements one step handles. Every value is correct; they change the access pattern.
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
using kf::host::chunked_copy;

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  const bool synced = g_sync.setup(comm);
  return synced ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const size_t chunk = x.bytes() / static_cast<size_t>(comm.world);
  const size_t r = static_cast<size_t>(comm.rank);
  g_sync.wait(comm);
  for (int k = 1; k <= comm.world; ++k) {  // peers first, starting after us
    const int s = (comm.rank + k) % comm.world;
    const size_t us = static_cast<size_t>(s);
    if (kAlgo == algo::pull)
      chunked_copy(y.ptr<char>() + us * chunk, comm.peer(x.ptr<const char>(), s) + r * chunk, chunk,
                   kChunk * 4);
    else
      chunked_copy(comm.peer(y.ptr<char>(), s) + r * chunk, x.ptr<const char>() + us * chunk, chunk,
                   kChunk * 4);
  }
  g_sync.wait(comm);
  return 0;
}
