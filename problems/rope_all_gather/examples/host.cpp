// A simple correct host candidate for rope_all_gather, the host twin of examples/uva.cu:
// once every rank has entered the call (its q, k, cos and sin are this call's), each rank
// reads every peer's inputs, applies RoPE in float (rounding once to bf16) and writes the
// result into that peer's slice of its own q_out and k_out; a second barrier keeps every
// input unchanged until every peer has read it.
#include <kf/host.h>
#include <kf/kf.h>

#include <cstdint>

namespace {

kf::host::Barrier g_sync;  // see <kf/host.h>

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

// out[d] = x[d] * c[d] + rot(x)[d] * n[d] for one head of D elements, rot(x) being
// (-x[h..D), x[0..h)) with h = D / 2.
void rope_head(uint16_t* out, const uint16_t* x, const uint16_t* c, const uint16_t* n, int64_t D) {
  const int64_t h = D / 2;
  for (int64_t d = 0; d < D; ++d) {
    const float rot = d < h ? -bf16_to_float(x[d + h]) : bf16_to_float(x[d - h]);
    out[d] = float_to_bf16(bf16_to_float(x[d]) * bf16_to_float(c[d]) + rot * bf16_to_float(n[d]));
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  return g_sync.setup(comm) ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& q = t["q"];
  const int64_t B = q.shape[0], S = q.shape[1], H = q.shape[2], D = q.shape[3];
  const char* const ins[2] = {"q", "k"};
  const char* const outs[2] = {"q_out", "k_out"};
  g_sync.wait(comm);  // every peer's inputs are ready
  for (int s = 0; s < comm.world; ++s) {
    const uint16_t* c = comm.peer(t["cos"].ptr<const uint16_t>(), s);
    const uint16_t* n = comm.peer(t["sin"].ptr<const uint16_t>(), s);
    for (int which = 0; which < 2; ++which) {
      const uint16_t* x = comm.peer(t[ins[which]].ptr<const uint16_t>(), s);
      uint16_t* out = t[outs[which]].ptr<uint16_t>();
      for (int64_t b = 0; b < B; ++b)
        for (int64_t i = 0; i < S; ++i)
          for (int64_t j = 0; j < H; ++j)  // position s*S + i of batch b in the output
            rope_head(out + (((b * comm.world + s) * S + i) * H + j) * D,
                      x + ((b * S + i) * H + j) * D, c + (b * S + i) * D, n + (b * S + i) * D, D);
    }
  }
  g_sync.wait(comm);  // nobody regenerates its inputs while a peer still reads them
  return 0;
}
