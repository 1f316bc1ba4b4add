// rope_all_gather on the host backend, with the knobs of kforge's template search:
// q_out(every rank)[b][s*S + i] = RoPE(q(s)[b][i]) with rank s's cos/sin row, k likewise;
// computed in float and rounded to bf16 once (the baseline rounds each product too; the
// tolerance allows both).
// pull: after a barrier (every rank's inputs are this call's), embed every rank's q and k
// straight from its heap into our outputs (each rank embeds every slice: world times the
// arithmetic, and the cos/sin rows cross the links too); a second barrier keeps every
// input unchanged until every peer has read it.
// push: after a barrier (every rank has entered the call, so its outputs hold no poison
// still to come), embed our own q and k once, KF_CHUNK_ELEMS elements at a time into a
// local buffer, and copy each chunk into slot `rank` of every rank's q_out and k_out,
// peers first; a second barrier: every peer's chunks have landed in our outputs.
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

// Knobs (kforge's template search sets them with #defines in front): who moves the bytes
// (pull: read the peers' inputs; push: write into the peers' outputs) and, for push, how
// many elements one embed-then-copy step handles (rounded down to whole positions, at
// least one). Every value is correct; they change the access pattern.
#ifndef KF_ALGO
#define KF_ALGO pull  // pull | push
#endif
#ifndef KF_CHUNK_ELEMS
#define KF_CHUNK_ELEMS 65536
#endif

namespace {

enum class algo { pull, push };
constexpr algo kAlgo = algo::KF_ALGO;
constexpr int64_t kChunk = KF_CHUNK_ELEMS;
static_assert(kChunk > 0, "KF_CHUNK_ELEMS must be positive");

kf::host::Barrier g_sync;     // see <kf/host.h>
std::vector<uint16_t> g_buf;  // push: one step's embedded positions

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

struct Dims {
  int64_t B, S, H, D;
  int64_t vec() const { return H * D; }        // elements of one position
  int64_t piece() const { return S * vec(); }  // one rank's slice of one batch
};

// out = x * cos + rotate_half(x) * sin for `rows` positions of H heads of D, each
// position with its own cos/sin row: rot(x) = (-x[h..D), x[0..h)), h = D / 2.
void rope_rows(uint16_t* out, const uint16_t* x, const uint16_t* c, const uint16_t* n, int64_t rows,
               const Dims& m) {
  const int64_t h = m.D / 2;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < m.H; ++j) {
      const uint16_t* xr = x + (r * m.H + j) * m.D;
      uint16_t* yr = out + (r * m.H + j) * m.D;
      for (int64_t d = 0; d < m.D; ++d) {
        const float rot = d < h ? -bf16_to_float(xr[d + h]) : bf16_to_float(xr[d - h]);
        yr[d] = float_to_bf16(bf16_to_float(xr[d]) * bf16_to_float(c[r * m.D + d]) +
                              rot * bf16_to_float(n[r * m.D + d]));
      }
    }
}

// Positions one push step embeds: kChunk elements' worth, at least one, at most S.
int64_t step_rows(const Dims& m) {
  return std::clamp<int64_t>(kChunk / m.vec(), 1, m.S);
}

// pull: rank s's slice of x (its q or k, from its heap) into every batch of our out.
void pull_slice(uint16_t* out, const uint16_t* x, const uint16_t* c, const uint16_t* n,
                const Dims& m, int world, int s) {
  for (int64_t b = 0; b < m.B; ++b)
    rope_rows(out + (b * world + s) * m.piece(), x + b * m.piece(), c + b * m.S * m.D,
              n + b * m.S * m.D, m.S, m);
}

// push: our x, embedded a step at a time, into slot `rank` of every rank's out.
void push_slice(const kf::Comm& comm, uint16_t* out, const uint16_t* x, const uint16_t* c,
                const uint16_t* n, const Dims& m) {
  const int64_t step = step_rows(m);
  for (int64_t b = 0; b < m.B; ++b)
    for (int64_t i = 0; i < m.S; i += step) {
      const int64_t rows = std::min(step, m.S - i);
      const int64_t at = b * m.piece() + i * m.vec();  // in x, and in our slot of out
      rope_rows(g_buf.data(), x + at, c + (b * m.S + i) * m.D, n + (b * m.S + i) * m.D, rows, m);
      for (int k = 1; k <= comm.world; ++k) {  // peers first, starting after us
        uint16_t* dst = comm.peer(out, (comm.rank + k) % comm.world);
        std::memcpy(dst + (b * comm.world + comm.rank) * m.piece() + i * m.vec(), g_buf.data(),
                    static_cast<size_t>(rows * m.vec()) * 2);
      }
    }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& q = t["q"];
  const Dims m{q.shape[0], q.shape[1], q.shape[2], q.shape[3]};
  if (kAlgo == algo::push) g_buf.assign(static_cast<size_t>(step_rows(m) * m.vec()), 0);
  return g_sync.setup(comm) ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& q = t["q"];
  const Dims m{q.shape[0], q.shape[1], q.shape[2], q.shape[3]};
  if (kAlgo == algo::push && g_buf.size() < static_cast<size_t>(step_rows(m) * m.vec())) return 1;
  const char* const ins[2] = {"q", "k"};
  const char* const outs[2] = {"q_out", "k_out"};
  const uint16_t* c = t["cos"].ptr<const uint16_t>();
  const uint16_t* n = t["sin"].ptr<const uint16_t>();
  g_sync.wait(comm);  // pull: every input is this call's; push: every output is writable
  for (int w = 0; w < 2; ++w) {
    const uint16_t* x = t[ins[w]].ptr<const uint16_t>();
    uint16_t* out = t[outs[w]].ptr<uint16_t>();
    if (kAlgo == algo::push) {
      push_slice(comm, out, x, c, n, m);
      continue;
    }
    for (int k = 1; k <= comm.world; ++k) {  // peers first, starting after us
      const int s = (comm.rank + k) % comm.world;
      pull_slice(out, comm.peer(x, s), comm.peer(c, s), comm.peer(n, s), m, comm.world, s);
    }
  }
  g_sync.wait(comm);  // pull: nobody's inputs are still read; push: our outputs are complete
  return 0;
}
