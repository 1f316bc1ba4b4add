// A simple correct host candidate for gemv_decode, the host twin of examples/uva.cu: each
// rank computes its piece x @ w^T + bias in float, rounded once to bf16, into a symmetric
// scratch [T, V]; after a barrier every rank copies every peer's piece, row by row, into
// that peer's columns of its logits (pull); a second barrier keeps every scratch unchanged
// until every peer has read it.
#include <kf/host.h>
#include <kf/kf.h>

#include <cstdint>
#include <cstring>

namespace {

kf::host::Barrier g_sync;     // see <kf/host.h>
uint16_t* g_piece = nullptr;  // [T, V] bf16

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  g_piece = comm.alloc_array<uint16_t>(static_cast<size_t>(t["x"].shape[0] * t["w"].shape[0]));
  return synced && g_piece ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const uint16_t* x = t["x"].ptr<const uint16_t>();
  const uint16_t* w = t["w"].ptr<const uint16_t>();
  const uint16_t* bias = t["bias"].ptr<const uint16_t>();
  const int64_t tokens = t["x"].shape[0], h = t["x"].shape[1], v = t["w"].shape[0];
  // Safe without a barrier first: every peer finished reading our scratch before the
  // last call's final barrier.
  for (int64_t i = 0; i < tokens; ++i)
    for (int64_t j = 0; j < v; ++j) {
      float dot = bf16_to_float(bias[j]);
      for (int64_t k = 0; k < h; ++k)
        dot += bf16_to_float(x[i * h + k]) * bf16_to_float(w[j * h + k]);
      g_piece[i * v + j] = float_to_bf16(dot);
    }
  g_sync.wait(comm);  // every rank's piece is complete
  uint16_t* logits = t["logits"].ptr<uint16_t>();
  const int64_t cols = comm.world * v;  // a row of logits: every rank's V entries
  for (int s = 0; s < comm.world; ++s)
    for (int64_t i = 0; i < tokens; ++i)
      std::memcpy(logits + i * cols + s * v, comm.peer(g_piece, s) + i * v,
                  static_cast<size_t>(v) * sizeof(uint16_t));
  g_sync.wait(comm);  // nobody recomputes its piece while a peer still reads it
  return 0;
}
