// moe_dispatch on the host backend, with the knobs of kforge's template search. Every
// rank routes its M tokens (routing_map, perm: expert-major, then token) before any wait;
// then row (l, s, j) of rank d's y, at world*l*C(d) + s*n(d,l) + j, is x(s)[perm(s)[d*q +
// l*C(d) + j]] (problem.json's SPLITS and LOCAL EXPERTS). No family builds the permuted
// matrix P: rows go straight from x to where they belong.
// pull: after a barrier (every peer has entered and written its perm, and its x is this
// call's), gather our rows from every peer's x through its perm; a second barrier keeps
// our x and perm unchanged until every peer has read them.
// push: after a barrier (every peer has entered, so the harness has already poisoned its y
// for this call), scatter our rows into every peer's y; a second barrier: every row of
// our y has arrived before we return.
// stage: one barrier per call. Scatter our rows into the peers' staging buffers, laid
// out like y, before any wait: a staging buffer is no output (the harness never touches
// it) and there are two, used by call parity. Call k's buffer was last read by its owner
// in call k - 2, before the owner reached call k - 1's barrier, which we have passed. After
// call k's barrier every row of our buffer is there: one contiguous copy makes it our y.
// Nobody reads our x or writes our y, so we may return at once.
#include <kf/host.h>
#include <kf/kf.h>

#include <cstdint>
#include <cstring>

// Knobs (kforge's template search sets them with #defines in front): who moves the bytes
// (pull: read the peers' x; push: write into the peers' y; stage: write into the peers'
// double-buffered staging) and how many elements one copy step handles. Every value is
// correct; they change the access pattern.
#ifndef KF_ALGO
#define KF_ALGO pull  // pull | push | stage
#endif
#ifndef KF_CHUNK_ELEMS
#define KF_CHUNK_ELEMS 65536
#endif

namespace {

enum class algo { pull, push, stage };
constexpr algo kAlgo = algo::KF_ALGO;
constexpr size_t kChunk = KF_CHUNK_ELEMS;
static_assert(kChunk > 0, "KF_CHUNK_ELEMS must be positive");

kf::host::Barrier g_sync;                   // see <kf/host.h>
uint16_t* g_stage[2] = {nullptr, nullptr};  // stage: y-shaped receive buffers, by call parity
unsigned g_calls = 0;                       // stage: kf_run calls so far (the same on every rank)

// The fixed splits: rank d receives S(d) rows from every rank, cut into L sub-chunks of
// C(d) rows, the last taking the remainder.
struct Splits {
  int64_t world, rows, q, local;
  int64_t size(int64_t d) const { return d == world - 1 ? rows - (world - 1) * q : q; }
  int64_t chunk(int64_t d) const { return size(d) / local; }
  int64_t sub(int64_t d, int64_t l) const {
    return l == local - 1 ? size(d) - (local - 1) * chunk(d) : chunk(d);
  }
};

// map[x][t] = 1 for the topk experts of token t (highest logit, ties to the lower index),
// and perm = the tokens of the set entries in (expert, token) order.
void route(const float* logits, int64_t m, int e, int topk, uint8_t* map, int32_t* perm) {
  std::memset(map, 0, static_cast<size_t>(e * m));
  for (int64_t t = 0; t < m; ++t)
    for (int k = 0; k < topk; ++k) {
      int best = -1;
      for (int x = 0; x < e; ++x)
        if (!map[x * m + t] && (best < 0 || logits[t * e + x] > logits[t * e + best])) best = x;
      map[best * m + t] = 1;
    }
  int32_t p = 0;
  for (int64_t f = 0; f < e * m; ++f)
    if (map[f]) perm[p++] = static_cast<int32_t>(f % m);
}

void copy_row(uint16_t* dst, const uint16_t* src, int64_t n) {
  kf::host::chunked_copy(reinterpret_cast<char*>(dst), reinterpret_cast<const char*>(src),
                         static_cast<size_t>(n) * sizeof(uint16_t), kChunk * sizeof(uint16_t));
}

// The rows rank s sends rank d: from x(s) through perm(s) into dst, which is laid out like
// y(d) (push: d's y; stage: d's staging buffer; pull, with s a peer and d = us: our y).
void send_block(const Splits& sp, int64_t s, int64_t d, const uint16_t* x, const int32_t* perm,
                uint16_t* dst, int64_t n) {
  const int64_t c = sp.chunk(d);
  for (int64_t l = 0; l < sp.local; ++l) {
    const int64_t count = sp.sub(d, l);
    for (int64_t j = 0; j < count; ++j)
      copy_row(dst + (sp.world * l * c + s * count + j) * n, x + perm[d * sp.q + l * c + j] * n, n);
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  if (kAlgo != algo::stage) return synced ? 0 : 1;
  // y's rows on the last rank, the most any rank receives: world * S(world - 1).
  const int64_t rows = t["perm"].numel, w = comm.world;
  const size_t elems = static_cast<size_t>(w * (rows - (w - 1) * (rows / w)) * t["x"].shape[1]);
  for (uint16_t*& b : g_stage) b = comm.alloc_array<uint16_t>(elems);
  return synced && g_stage[0] && g_stage[1] ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  kf::Tensor& perm = t["perm"];
  const int64_t m = x.shape[0], n = x.shape[1], w = comm.world, r = comm.rank;
  const int e = static_cast<int>(t.iparam("E")), topk = static_cast<int>(t.iparam("topk"));
  const Splits sp{w, perm.numel, perm.numel / w, e / w};
  route(t["logits"].ptr<const float>(), m, e, topk, t["routing_map"].ptr<uint8_t>(),
        perm.ptr<int32_t>());
  const uint16_t* px = x.ptr<const uint16_t>();
  const int32_t* pp = perm.ptr<const int32_t>();
  if (kAlgo == algo::stage) {
    uint16_t* stage = g_stage[g_calls++ & 1u];
    for (int k = 1; k <= comm.world; ++k) {  // peers first, starting after us
      const int d = (comm.rank + k) % comm.world;
      send_block(sp, r, d, px, pp, comm.peer(stage, d), n);
    }
    g_sync.wait(comm);  // every rank's rows are in our buffer of this parity
    kf::host::chunked_copy(y.ptr<char>(), reinterpret_cast<const char*>(stage), y.bytes(),
                           kChunk * sizeof(uint16_t));
    return 0;
  }
  g_sync.wait(comm);  // pull: every x and perm is this call's; push: every y takes our rows
  for (int k = 1; k <= comm.world; ++k) {
    const int p = (comm.rank + k) % comm.world;
    if (kAlgo == algo::pull)  // rank p's rows for us, into our y
      send_block(sp, p, r, comm.peer(px, p), comm.peer(pp, p), y.ptr<uint16_t>(), n);
    else  // our rows for rank p, into its y
      send_block(sp, r, p, px, pp, comm.peer(y.ptr<uint16_t>(), p), n);
  }
  g_sync.wait(comm);  // pull: nobody reads our x or perm any more; push: our y is complete
  return 0;
}
