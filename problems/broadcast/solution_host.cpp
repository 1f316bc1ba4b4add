// broadcast on the host backend, with the knobs of kforge's template search: y(every
// rank) = x(root). pull: after a barrier (the root's x is ready), every rank copies the
// root's x into its own y. push: after a barrier (every y is ready for this call), the
// root copies its x into every rank's y. A final barrier either way.
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
  const int root = static_cast<int>(t.iparam("root", 0));
  g_sync.wait(comm);
  if (kAlgo == algo::pull) {
    chunked_copy(y.ptr<char>(), comm.peer(x.ptr<const char>(), root), x.bytes(), kChunk * 4);
  } else if (comm.rank == root) {
    for (int k = 1; k <= comm.world; ++k)
      chunked_copy(comm.peer(y.ptr<char>(), (root + k) % comm.world), x.ptr<const char>(),
                   x.bytes(), kChunk * 4);
  }
  g_sync.wait(comm);
  return 0;
}
