// A simple correct host candidate for reduce, pull style: once every rank has entered the
// call, the root reads every rank's x straight from its heap and writes the sum into its
// y; every other rank copies its own x into its y. A final barrier keeps each x unchanged
// until the root has read it.
#include <kf/host.h>
#include <kf/kf.h>
#include <sched.h>

#include <atomic>
#include <cstring>

namespace {

kf::host::Barrier g_sync;  // see <kf/host.h>

using kf::host::load;
using kf::host::store;

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  const bool synced = g_sync.setup(comm);
  return synced ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const int root = static_cast<int>(t.iparam("root", 0));
  const bool bf16 = x.dtype == kf::DType::bf16;
  const size_t n = static_cast<size_t>(x.numel);
  g_sync.wait(comm);  // every rank's x is ready
  if (comm.rank == root) {
    for (size_t i = 0; i < n; ++i) {
      float s = 0;
      for (int r = 0; r < comm.world; ++r) s += load(comm.peer(x.ptr<const char>(), r), i, bf16);
      store(y.data, i, s, bf16);
    }
  } else {
    std::memcpy(y.data, x.data, x.bytes());
  }
  g_sync.wait(comm);  // the root has read every x
  return 0;
}
