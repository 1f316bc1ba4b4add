// vocab_parallel_cross_entropy on the host backend: the baseline's semantics in plain C++
// over the symmetric heap, rounding to bf16 where PyTorch's bf16 kernels do (the shifted
// logits, each exponential, each rank's sum, each partial sum of the all-reduce, the log,
// the loss). Three barriers stand for the all-reduces: after the first every rank reads
// every row max (and rank 0's labels: rank 0 has entered the call); after the second
// every label logit and sum; the third keeps the scratch and rank 0's target unchanged
// until every peer has read them.
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace {

kf::host::Barrier g_sync;  // see <kf/host.h>
float* g_max = nullptr;    // [rows]: this rank's row max (a bf16 value)
float* g_label = nullptr;  // [rows]: the label's shifted logit on its owner, else 0 (bf16)
float* g_sum = nullptr;    // [rows]: this rank's sum of exponentials (bf16)

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

float round_bf16(float v) {
  return bf16_to_float(float_to_bf16(v));
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const size_t rows = static_cast<size_t>(t["logits"].shape[0] * t["logits"].shape[1]);
  const bool synced = g_sync.setup(comm);
  g_max = comm.alloc_array<float>(rows);
  g_label = comm.alloc_array<float>(rows);
  g_sum = comm.alloc_array<float>(rows);
  return synced && g_max && g_label && g_sum ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& logits = t["logits"];
  const int64_t rows = logits.shape[0] * logits.shape[1], vl = logits.shape[2];
  const int64_t start = comm.rank * vl;
  const uint16_t* x = logits.ptr<const uint16_t>();
  for (int64_t row = 0; row < rows; ++row) {
    float m = -INFINITY;
    for (int64_t v = 0; v < vl; ++v) m = std::max(m, bf16_to_float(x[row * vl + v]));
    g_max[row] = m;
  }
  g_sync.wait(comm);  // every row max is written; rank 0's target is this call's
  const int64_t* label = comm.peer(t["target"].ptr<const int64_t>(), 0);
  for (int64_t row = 0; row < rows; ++row) {
    float m = -INFINITY;
    for (int r = 0; r < comm.world; ++r) m = std::max(m, comm.peer(g_max, r)[row]);
    float sum = 0.0f, p = 0.0f;
    for (int64_t v = 0; v < vl; ++v) {
      const float d = round_bf16(bf16_to_float(x[row * vl + v]) - m);
      sum += round_bf16(std::exp(d));
      if (label[row] == start + v) p = d;
    }
    g_label[row] = p;
    g_sum[row] = round_bf16(sum);
  }
  g_sync.wait(comm);  // every label logit and sum is written
  uint16_t* loss = t["loss"].ptr<uint16_t>();
  for (int64_t row = 0; row < rows; ++row) {
    float s = comm.peer(g_sum, 0)[row], p = comm.peer(g_label, 0)[row];
    for (int r = 1; r < comm.world; ++r) {
      s = round_bf16(s + comm.peer(g_sum, r)[row]);
      p = round_bf16(p + comm.peer(g_label, r)[row]);
    }
    loss[row] = float_to_bf16(round_bf16(std::log(s)) - p);
  }
  g_sync.wait(comm);  // nobody rewrites its scratch or target while a peer still reads it
  return 0;
}
