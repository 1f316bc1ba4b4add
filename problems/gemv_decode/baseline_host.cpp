// gemv_decode on the host backend: the baseline's semantics in plain C++ over the
// symmetric heap. Each rank computes its piece as PyTorch does, x @ w^T accumulated in
// float and rounded to bf16 (matmul's output), then + bias in float rounded to bf16 again,
// into a heap scratch [T, V]; after a barrier every rank copies every peer's piece into
// its columns of logits (the all-gather and torch.cat in one pass); a second barrier keeps
// the scratch unwritten until every peer has read it.
#include <kf/host.h>
#include <kf/kf.h>

#include <cstdint>
#include <cstring>

namespace {

kf::host::Barrier g_sync;     // see <kf/host.h>
uint16_t* g_piece = nullptr;  // [T, V] bf16: our local logits

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

// piece[i][j] = bf16(bf16(x[i] . w[j]) + bias[j]): the two roundings of matmul, then add.
void local_logits(uint16_t* piece, const uint16_t* x, const uint16_t* w, const uint16_t* bias,
                  int64_t t, int64_t h, int64_t v) {
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = 0; j < v; ++j) {
      float dot = 0.0f;
      for (int64_t k = 0; k < h; ++k)
        dot += bf16_to_float(x[i * h + k]) * bf16_to_float(w[j * h + k]);
      const float product = bf16_to_float(float_to_bf16(dot));
      piece[i * v + j] = float_to_bf16(product + bf16_to_float(bias[j]));
    }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  g_piece = comm.alloc_array<uint16_t>(static_cast<size_t>(t["x"].shape[0] * t["w"].shape[0]));
  return synced && g_piece ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  const kf::Tensor& w = t["w"];
  const int64_t tokens = x.shape[0], h = x.shape[1], v = w.shape[0];
  local_logits(g_piece, x.ptr<const uint16_t>(), w.ptr<const uint16_t>(),
               t["bias"].ptr<const uint16_t>(), tokens, h, v);
  g_sync.wait(comm);  // every rank's piece is in its scratch
  uint16_t* out = t["logits"].ptr<uint16_t>();
  for (int s = 0; s < comm.world; ++s) {
    const uint16_t* piece = comm.peer(g_piece, s);
    for (int64_t i = 0; i < tokens; ++i)
      std::memcpy(out + (i * comm.world + s) * v, piece + i * v, static_cast<size_t>(v) * 2);
  }
  g_sync.wait(comm);  // nobody rewrites its scratch while a peer still reads it
  return 0;
}
