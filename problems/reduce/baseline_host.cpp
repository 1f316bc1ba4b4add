// reduce on the host backend: the baseline's semantics in plain C++ over the symmetric
// heap. Every rank copies its x into y (the clone); after a barrier the root pulls every
// peer's x and sums it in float, in rank order; a second barrier keeps the peers' inputs
// alive until the root has read them.
#include <kf/host.h>
#include <kf/kf.h>
#include <sched.h>

#include <atomic>
#include <cstring>
#include <vector>

namespace {

kf::host::Barrier g_sync;  // see <kf/host.h>

// y = the sum over ranks of x, read from every rank's heap.
void sum_all(const kf::Comm& comm, const kf::Tensor& x, kf::Tensor& y) {
  const size_t n = static_cast<size_t>(y.numel);
  const bool bf16 = x.dtype == kf::DType::bf16;
  std::vector<float> acc(n, 0.0f);
  for (int r = 0; r < comm.world; ++r) {
    const void* xr = comm.peer(x.ptr<const char>(), r);
    for (size_t i = 0; i < n; ++i) acc[i] += kf::host::load(xr, i, bf16);
  }
  for (size_t i = 0; i < n; ++i) kf::host::store(y.data, i, acc[i], bf16);
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  return g_sync.setup(comm) ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const int root = static_cast<int>(t.iparam("root", 0));
  g_sync.wait(comm);  // every rank's x is ready
  if (comm.rank == root)
    sum_all(comm, x, y);
  else
    std::memcpy(y.data, x.data, x.bytes());
  g_sync.wait(comm);  // nobody has x regenerated while the root still reads it
  return 0;
}
