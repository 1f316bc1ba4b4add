// reduce_scatter on the host backend: the baseline's semantics in plain C++ over the
// symmetric heap. Pull style: after a barrier rank r sums chunk r of every peer's x into
// its own y; a second barrier keeps peers' inputs alive until everyone has read them.
#include <kf/host.h>
#include <kf/kf.h>
#include <sched.h>

#include <atomic>
#include <cstring>
#include <vector>

namespace {

kf::host::Barrier g_sync;  // see <kf/host.h>

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  return g_sync.setup(comm) ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const size_t n = static_cast<size_t>(y.numel);
  const size_t mine = static_cast<size_t>(comm.rank) * n;
  g_sync.wait(comm);  // every rank's x is ready
  if (x.dtype == kf::DType::bf16) {
    std::vector<float> acc(n, 0.0f);
    for (int r = 0; r < comm.world; ++r) {
      const uint16_t* xr = comm.peer(x.ptr<const uint16_t>(), r) + mine;
      for (size_t i = 0; i < n; ++i) acc[i] += bf16_to_float(xr[i]);
    }
    uint16_t* out = y.ptr<uint16_t>();
    for (size_t i = 0; i < n; ++i) out[i] = float_to_bf16(acc[i]);
  } else {
    float* out = y.ptr<float>();
    for (size_t i = 0; i < n; ++i) out[i] = 0.0f;
    for (int r = 0; r < comm.world; ++r) {
      const float* xr = comm.peer(x.ptr<const float>(), r) + mine;
      for (size_t i = 0; i < n; ++i) out[i] += xr[i];
    }
  }
  g_sync.wait(comm);  // nobody has x regenerated while a peer still reads it
  return 0;
}
