// A simple correct host candidate for all_gather, push style: once every rank has entered
// the call (its y is ready to receive), each rank writes its x into slot `rank` of every y.
#include <kf/host.h>
#include <kf/kf.h>
#include <sched.h>

#include <atomic>
#include <cstring>

namespace {

kf::host::Barrier g_sync;  // see <kf/host.h>

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  const bool synced = g_sync.setup(comm);
  return synced ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  g_sync.wait(comm);  // every peer's y is ready for this call's data
  for (int r = 0; r < comm.world; ++r)
    std::memcpy(comm.peer(y.ptr<char>(), r) + static_cast<size_t>(comm.rank) * x.bytes(), x.data,
                x.bytes());
  g_sync.wait(comm);  // every slot of my y has arrived
  return 0;
}
