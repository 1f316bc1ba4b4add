// rope_all_gather on the host backend: the baseline's semantics in plain C++ over the
// symmetric heap. Each rank embeds its own q and k as PyTorch does in bf16 (q * cos and
// rotate_half(q) * sin each rounded to bf16, then their sum rounded again) into a
// symmetric scratch; after a barrier (every rank's scratch holds this call's slice) it
// copies every rank's slice into its place in q_out and k_out (all_gather + torch.cat);
// a second barrier keeps every scratch unchanged until every peer has read it.
#include <kf/host.h>
#include <kf/kf.h>

#include <cstdint>
#include <cstring>

namespace {

kf::host::Barrier g_sync;        // see <kf/host.h>
uint16_t* g_embedded = nullptr;  // [2][B, S, H, D]: our embedded q, then k
int64_t g_numel = 0;             // elements of q (and of k)

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

float round_bf16(float v) {
  return bf16_to_float(float_to_bf16(v));
}

// out = x * cos + rotate_half(x) * sin over [B, S, H, D], with PyTorch's three roundings.
void rope(uint16_t* out, const uint16_t* x, const uint16_t* c, const uint16_t* n, int64_t rows,
          int64_t H, int64_t D) {
  const int64_t h = D / 2;
  for (int64_t r = 0; r < rows; ++r)  // r = b * S + i: one cos/sin row
    for (int64_t j = 0; j < H; ++j) {
      const uint16_t* xr = x + (r * H + j) * D;
      for (int64_t d = 0; d < D; ++d) {
        const float rot = d < h ? -bf16_to_float(xr[d + h]) : bf16_to_float(xr[d - h]);
        const float a = round_bf16(bf16_to_float(xr[d]) * bf16_to_float(c[r * D + d]));
        const float b = round_bf16(rot * bf16_to_float(n[r * D + d]));
        out[(r * H + j) * D + d] = float_to_bf16(a + b);
      }
    }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  g_numel = t["q"].numel;
  g_embedded = comm.alloc_array<uint16_t>(2 * static_cast<size_t>(g_numel));
  return g_sync.setup(comm) && g_embedded ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& q = t["q"];
  const int64_t B = q.shape[0], S = q.shape[1], H = q.shape[2], D = q.shape[3];
  if (q.numel != g_numel) return 1;  // not the shape kf_setup sized the scratch for
  const uint16_t* c = t["cos"].ptr<const uint16_t>();
  const uint16_t* n = t["sin"].ptr<const uint16_t>();
  rope(g_embedded, q.ptr<const uint16_t>(), c, n, B * S, H, D);
  rope(g_embedded + g_numel, t["k"].ptr<const uint16_t>(), c, n, B * S, H, D);
  g_sync.wait(comm);  // every rank's embedded slices are this call's
  const size_t piece = static_cast<size_t>(S * H * D);  // one batch of one rank's slice
  uint16_t* outs[2] = {t["q_out"].ptr<uint16_t>(), t["k_out"].ptr<uint16_t>()};
  for (int s = 0; s < comm.world; ++s)
    for (int which = 0; which < 2; ++which) {
      const uint16_t* src = comm.peer(g_embedded, s) + which * g_numel;
      for (int64_t b = 0; b < B; ++b)
        std::memcpy(outs[which] + (b * comm.world + s) * piece, src + b * piece, piece * 2);
    }
  g_sync.wait(comm);  // nobody rewrites its scratch while a peer still reads it
  return 0;
}
