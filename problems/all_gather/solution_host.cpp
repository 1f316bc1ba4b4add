// all_gather on the host backend, with the knobs of kforge's template search:
// y(every rank)[s*n : (s+1)*n] = x(rank s).
// pull: after a barrier (every x is ready), copy every rank's x into chunk s of our y.
// push: after a barrier (every y is ready for this call), copy our x into chunk `rank`
// of every rank's y. Either way a final barrier: every copy into (or out of) a rank's
// buffers is done before the next call.
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
  const size_t bytes = x.bytes();
  g_sync.wait(comm);
  for (int k = 1; k <= comm.world; ++k) {  // peers first, starting after us
    const int s = (comm.rank + k) % comm.world;
    if (kAlgo == algo::pull)
      chunked_copy(y.ptr<char>() + static_cast<size_t>(s) * bytes,
                   comm.peer(x.ptr<const char>(), s), bytes, kChunk * 4);
    else
      chunked_copy(comm.peer(y.ptr<char>(), s) + static_cast<size_t>(comm.rank) * bytes,
                   x.ptr<const char>(), bytes, kChunk * 4);
  }
  g_sync.wait(comm);
  return 0;
}
