// A simple correct host candidate for quantized_grad_all_reduce, push style: each rank
// quantizes and dequantizes its x block by block, copies the fp32 result into slot `rank`
// of every peer's staging buffer, then averages the world slots of its own.
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace {

kf::host::Barrier g_sync;  // see <kf/host.h>

float* g_stage = nullptr;  // world slots of n floats, one per source rank

// d = dequantize(quantize(x)), one block of `block` elements at a time (the last may be
// shorter): scale = max(amax, 1e-8) / 127, code = x / scale rounded to even, clamped.
void quant_dequant(float* d, const float* x, size_t n, size_t block) {
  for (size_t b = 0; b < n; b += block) {
    const size_t end = std::min(n, b + block);
    float amax = 0.0f;
    for (size_t i = b; i < end; ++i) amax = std::max(amax, std::fabs(x[i]));
    const float scale = std::max(amax, 1e-8f) / 127.0f;
    for (size_t i = b; i < end; ++i) {
      const float code = std::clamp(std::nearbyint(x[i] / scale), -127.0f, 127.0f);
      d[i] = code * scale;
    }
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  g_stage = comm.alloc_array<float>(static_cast<size_t>(t["x"].numel) * comm.world);
  return synced && g_stage ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const size_t n = static_cast<size_t>(x.numel);
  std::vector<float> d(n);
  quant_dequant(d.data(), x.ptr<const float>(), n, static_cast<size_t>(t.iparam("block")));
  // Safe without a barrier first: every peer finished reading its staging buffer before
  // the last call's final barrier.
  for (int r = 0; r < comm.world; ++r)
    std::memcpy(comm.peer(g_stage, r) + static_cast<size_t>(comm.rank) * n, d.data(),
                n * sizeof(float));
  g_sync.wait(comm);  // every slot of my staging buffer is written
  float* out = y.ptr<float>();
  for (size_t i = 0; i < n; ++i) {
    float s = 0;
    for (int r = 0; r < comm.world; ++r) s += g_stage[static_cast<size_t>(r) * n + i];
    out[i] = s / static_cast<float>(comm.world);
  }
  g_sync.wait(comm);  // nobody overwrites my staging buffer before I have summed it
  return 0;
}
