// reduce_scatter on the host backend: the baseline's semantics in plain C++ over the
// symmetric heap. Pull style: after a barrier rank r sums chunk r of every peer's x into
// its own y; a second barrier keeps peers' inputs alive until everyone has read them.
#include <atomic>
#include <cstring>
#include <vector>

#include <sched.h>

#include <kf/kf.h>

namespace {

uint32_t* g_arrived = nullptr;  // g_arrived[s]: the last barrier rank s has entered
uint32_t g_epoch = 0;           // barriers entered by this rank; never reset

// Every rank announces `epoch` in every peer's slot, then waits for all slots to reach it.
// `>=` (not `==`) because a fast peer may already have announced the next barrier.
void barrier(const kf::Comm& comm) {
  const uint32_t epoch = ++g_epoch;
  for (int r = 0; r < comm.world; ++r)
    std::atomic_ref<uint32_t>(comm.peer(g_arrived, r)[comm.rank]).store(epoch);
  for (int r = 0; r < comm.world; ++r)
    while (std::atomic_ref<uint32_t>(g_arrived[r]).load() < epoch) sched_yield();
}

float bf16_to_float(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Round to nearest, ties to even, as __float2bfloat16_rn does; NaN stays NaN.
uint16_t float_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  g_arrived = comm.signals(kf::kMaxWorld);
  return g_arrived ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const size_t n = static_cast<size_t>(y.numel);
  const size_t mine = static_cast<size_t>(comm.rank) * n;
  barrier(comm);  // every rank's x is ready
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
  barrier(comm);  // nobody has x regenerated while a peer still reads it
  return 0;
}
