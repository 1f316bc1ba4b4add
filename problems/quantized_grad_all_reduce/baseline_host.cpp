// quantized_grad_all_reduce on the host backend: the baseline's semantics in plain C++ over
// the symmetric heap, step for step as PyTorch runs the reference: quantize-dequantize our
// x block by block into an fp32 buffer (the reference's `acc`), all-reduce it (sum), divide
// by world. The all-reduce is pull style: after a barrier every rank sums every peer's
// buffer in rank order; a second barrier keeps each buffer unchanged until every peer has
// read it.
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace {

kf::host::Barrier g_sync;  // see <kf/host.h>
float* g_acc = nullptr;    // [n]: our dequantized x, read by every peer

// d = dequantize(quantize(x)) block by block, in fp32 as problem.json spells it out: the
// scale is max(amax, 1e-8) / 127 and the code rounds x / scale to even, clamped to +-127.
void quant_dequant(float* d, const float* x, size_t n, size_t block) {
  for (size_t b = 0; b < n; b += block) {
    const size_t end = std::min(n, b + block);
    float amax = 0.0f;
    for (size_t i = b; i < end; ++i) amax = std::max(amax, std::fabs(x[i]));
    const float scale = std::max(amax, 1e-8f) / 127.0f;
    for (size_t i = b; i < end; ++i)
      d[i] = std::clamp(std::nearbyint(x[i] / scale), -127.0f, 127.0f) * scale;
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  g_acc = comm.alloc_array<float>(static_cast<size_t>(t["x"].numel));
  return synced && g_acc ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const size_t n = static_cast<size_t>(x.numel);
  quant_dequant(g_acc, x.ptr<const float>(), n, static_cast<size_t>(t.iparam("block")));
  g_sync.wait(comm);  // every rank's acc holds this call's values
  float* out = y.ptr<float>();
  std::fill(out, out + n, 0.0f);
  for (int r = 0; r < comm.world; ++r) {
    const float* acc = comm.peer(g_acc, r);
    for (size_t i = 0; i < n; ++i) out[i] += acc[i];
  }
  for (size_t i = 0; i < n; ++i) out[i] /= static_cast<float>(comm.world);  // acc.div_(world)
  g_sync.wait(comm);  // nobody rewrites its acc while a peer still reads it
  return 0;
}
