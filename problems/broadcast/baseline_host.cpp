// broadcast on the host backend: the baseline's semantics in plain C++ over the
// symmetric heap. Pull style: after a barrier every rank copies the root's x into its own
// y; a second barrier keeps the root's input alive until everyone has read it.
#include <kf/host.h>
#include <kf/kf.h>
#include <sched.h>

#include <atomic>
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
  const int root = static_cast<int>(t.iparam("root", 0));
  g_sync.wait(comm);  // the root's x is ready
  std::memcpy(y.data, comm.peer(x.ptr<const float>(), root), y.bytes());
  g_sync.wait(comm);  // the root's x is not regenerated while a peer still reads it
  return 0;
}
