// gemv_decode on the host backend, with the knobs of kforge's template search:
// logits(every rank)[t][s*V + v] = x(s)[t] . w(s)[v] + bias(s)[v], each piece accumulated
// in float and rounded once to bf16.
// pull: compute our piece straight into our own columns of logits (no scratch), barrier
// (every piece is in its owner's logits), copy every peer's columns out of the peer's
// logits into ours, barrier (nobody returns, and has its logits checked and poisoned,
// while a peer still reads them).
// push: barrier first (every peer has entered the call, so its logits are ours to write),
// compute our piece a row at a time and copy each row into our columns of every rank's
// logits, barrier (every piece has arrived everywhere).
#include <kf/host.h>
#include <kf/kf.h>

#include <cstdint>
#include <vector>

// Knobs (kforge's template search sets them with #defines in front): who moves the bytes
// (pull: read the peers' logits; push: write into them) and how many elements one copy
// step handles. Every value is correct; they change the access pattern.
#ifndef KF_ALGO
#define KF_ALGO pull  // pull | push
#endif
#ifndef KF_CHUNK_ELEMS
#define KF_CHUNK_ELEMS 65536
#endif

namespace {

enum class algo { pull, push };
constexpr algo kAlgo = algo::KF_ALGO;
constexpr size_t kChunk = KF_CHUNK_ELEMS;
static_assert(kChunk > 0, "KF_CHUNK_ELEMS must be positive");

kf::host::Barrier g_sync;  // see <kf/host.h>

using kf::host::bf16_to_float;
using kf::host::chunked_copy;
using kf::host::float_to_bf16;

// The problem's shapes and this call's pointers.
struct Call {
  const uint16_t* x;     // [T, H]
  const uint16_t* w;     // [V, H]
  const uint16_t* bias;  // [V]
  uint16_t* logits;      // [T, world * V]
  int64_t t, h, v;
};

// row[j] = bf16(x[i] . w[j] + bias[j]) for j < V: token i's piece, in float, with x's row
// decoded once rather than once per vocabulary entry.
void piece_row(const Call& c, int64_t i, uint16_t* row, std::vector<float>& xf) {
  for (int64_t k = 0; k < c.h; ++k) xf[k] = bf16_to_float(c.x[i * c.h + k]);
  for (int64_t j = 0; j < c.v; ++j) {
    const uint16_t* wr = c.w + j * c.h;
    float dot = bf16_to_float(c.bias[j]);
    for (int64_t k = 0; k < c.h; ++k) dot += xf[k] * bf16_to_float(wr[k]);
    row[j] = float_to_bf16(dot);
  }
}

// Copies token i's V entries of rank s's piece from `src` logits into `dst` logits.
void copy_piece_row(uint16_t* dst, const uint16_t* src, const Call& c, int world, int s,
                    int64_t i) {
  const int64_t at = (i * world + s) * c.v;
  chunked_copy(reinterpret_cast<char*>(dst + at), reinterpret_cast<const char*>(src + at),
               static_cast<size_t>(c.v) * 2, kChunk * 2);
}

void pull(kf::Comm& comm, const Call& c, std::vector<float>& xf) {
  for (int64_t i = 0; i < c.t; ++i)
    piece_row(c, i, c.logits + (i * comm.world + comm.rank) * c.v, xf);
  g_sync.wait(comm);                      // every rank's piece is in its own logits
  for (int k = 1; k < comm.world; ++k) {  // peers only, starting after us
    const int s = (comm.rank + k) % comm.world;
    const uint16_t* theirs = comm.peer(static_cast<const uint16_t*>(c.logits), s);
    for (int64_t i = 0; i < c.t; ++i) copy_piece_row(c.logits, theirs, c, comm.world, s, i);
  }
  g_sync.wait(comm);  // every peer is done reading our columns
}

void push(kf::Comm& comm, const Call& c, std::vector<float>& xf) {
  g_sync.wait(comm);  // every peer's logits are ready for this call's data
  for (int64_t i = 0; i < c.t; ++i) {
    uint16_t* ours = c.logits + (i * comm.world + comm.rank) * c.v;
    piece_row(c, i, ours, xf);
    for (int k = 1; k < comm.world; ++k) {  // peers only, starting after us
      uint16_t* theirs = comm.peer(c.logits, (comm.rank + k) % comm.world);
      copy_piece_row(theirs, c.logits, c, comm.world, comm.rank, i);
    }
  }
  g_sync.wait(comm);  // every peer's piece has arrived in our logits
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  return g_sync.setup(comm) ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  const kf::Tensor& w = t["w"];
  const Call c{x.ptr<const uint16_t>(),
               w.ptr<const uint16_t>(),
               t["bias"].ptr<const uint16_t>(),
               t["logits"].ptr<uint16_t>(),
               x.shape[0],
               x.shape[1],
               w.shape[0]};
  std::vector<float> xf(static_cast<size_t>(c.h));
  if (kAlgo == algo::pull)
    pull(comm, c, xf);
  else
    push(comm, c, xf);
  return 0;
}
