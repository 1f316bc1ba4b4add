// moe_combine on the host backend, with the knobs of kforge's template search. Every rank
// routes its M tokens before any wait: each token's topk experts (highest logit, ties to
// the lower index), their softmax weights in float, and each pair's position p(t, e) in
// the permuted (expert, token) order. Then y[t] = bf16(sum over its experts, in expert
// order, of w(t, e) * row p(t, e)), summed in float: the same bits whichever family
// fetched the rows. Position p of ours is row world*l*C(d) + rank*n(d,l) + j of x(d), for
// d = min(p / q, world - 1), and rank d's block (l, s) of x, n(d,l) rows, is exactly our
// positions d*q + l*C(d) .. of rank s (problem.json's SPLITS and LOCAL EXPERTS).
// pull: after a barrier (every peer has entered, so its x is this call's), read each
// pair's row straight from its holder's x; a second barrier keeps our x unchanged until
// every peer has read it (the harness regenerates x the moment we return).
// push: write each block (l, s) of our x, contiguous on both sides, into rank s's staging
// buffer at the positions it stands for, before any wait: the staging buffer is no output
// (the harness never touches it), and its owner finished reading it in the last call
// before that call's second barrier, which we have passed. A barrier (every block of ours
// has arrived), the sums from our buffer, and a second barrier before anyone writes it
// again.
// stage: push into two staging buffers used by call parity, and one barrier per call.
// Call k's buffer was last read by its owner in call k - 2, before the owner reached call
// k - 1's barrier, which we have passed; nobody reads our x, so we may return at once.
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

// Knobs (kforge's template search sets them with #defines in front): who moves the bytes
// (pull: read the holders' x; push: write into the owners' staging buffer; stage: the
// same, double-buffered) and how many elements one block copy step handles (push and
// stage; pull reads row by row). Every value is correct; they change the access pattern.
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
uint16_t* g_stage[2] = {nullptr, nullptr};  // push: [0]; stage: by call parity. [R, N]
unsigned g_calls = 0;                       // kf_run calls so far (the same on every rank)

// The fixed splits: rank d holds S(d) rows from every rank, cut into L sub-chunks of C(d)
// rows, the last taking the remainder.
struct Splits {
  int64_t world, rows, q, local;
  int64_t size(int64_t d) const { return d == world - 1 ? rows - (world - 1) * q : q; }
  int64_t chunk(int64_t d) const { return size(d) / local; }
  int64_t sub(int64_t d, int64_t l) const {
    return l == local - 1 ? size(d) - (local - 1) * chunk(d) : chunk(d);
  }
  // The rank that holds position p of rank s, and the row of its x.
  void locate(int64_t s, int64_t p, int64_t* d, int64_t* row) const {
    *d = std::min(p / q, world - 1);
    const int64_t i = p - *d * q, c = chunk(*d);
    const int64_t l = std::min(i / c, local - 1);
    *row = world * l * c + s * sub(*d, l) + (i - l * c);
  }
};

// Token t's pairs, in expert order: pos[t * topk + k] is p(t, e), weight[...] is w(t, e).
struct Routing {
  std::vector<int64_t> pos;
  std::vector<float> weight;
};

Routing route(const float* logits, int64_t m, int e, int topk) {
  Routing r;
  r.pos.resize(static_cast<size_t>(m * topk));
  r.weight.resize(r.pos.size());
  std::vector<char> chosen(static_cast<size_t>(m * e), 0);
  std::vector<int64_t> next(static_cast<size_t>(e) + 1, 0);  // first free position, by expert
  for (int64_t t = 0; t < m; ++t) {
    const float* row = logits + t * e;
    char* taken = chosen.data() + t * e;
    for (int k = 0; k < topk; ++k) {
      int best = -1;
      for (int x = 0; x < e; ++x)
        if (!taken[x] && (best < 0 || row[x] > row[best])) best = x;
      taken[best] = 1;
      ++next[best + 1];
    }
  }
  for (int x = 0; x < e; ++x) next[x + 1] += next[x];  // pairs of the experts below x
  for (int64_t t = 0; t < m; ++t) {
    const float* row = logits + t * e;
    const char* taken = chosen.data() + t * e;
    const float top = *std::max_element(row, row + e);  // a chosen logit: exp() <= 1
    float sum = 0;
    for (int x = 0; x < e; ++x)
      if (taken[x]) sum += std::exp(row[x] - top);
    size_t k = static_cast<size_t>(t * topk);
    for (int x = 0; x < e; ++x)
      if (taken[x]) {  // tokens arrive in order: an expert's earlier tokens took next[x]
        r.pos[k] = next[x]++;
        r.weight[k++] = std::exp(row[x] - top) / sum;
      }
  }
  return r;
}

// y[t] = the weighted sum of its rows, row_of(p) giving the N values of position p.
template <class RowOf>
void combine(const Routing& r, RowOf row_of, uint16_t* y, int64_t m, int64_t n, int topk) {
  std::vector<float> acc(static_cast<size_t>(n));
  for (int64_t t = 0; t < m; ++t) {
    std::fill(acc.begin(), acc.end(), 0.0f);
    for (int64_t k = t * topk; k < (t + 1) * topk; ++k) {
      const uint16_t* src = row_of(r.pos[k]);
      const float w = r.weight[k];
      for (int64_t i = 0; i < n; ++i) acc[i] += w * kf::host::bf16_to_float(src[i]);
    }
    for (int64_t i = 0; i < n; ++i) y[t * n + i] = kf::host::float_to_bf16(acc[i]);
  }
}

// Our x's blocks back to their tokens' owners: block (l, s), n(rank, l) rows, into rank
// s's staging buffer at positions rank*q + l*C(rank) onwards, peers first.
void push_blocks(const kf::Comm& comm, const Splits& sp, const uint16_t* x, uint16_t* stage,
                 int64_t n) {
  const int64_t r = comm.rank, c = sp.chunk(r);
  for (int k = 1; k <= comm.world; ++k) {
    const int s = (comm.rank + k) % comm.world;
    for (int64_t l = 0; l < sp.local; ++l) {
      const int64_t count = sp.sub(r, l);
      kf::host::chunked_copy(reinterpret_cast<char*>(comm.peer(stage, s) + (r * sp.q + l * c) * n),
                             reinterpret_cast<const char*>(x + (sp.world * l * c + s * count) * n),
                             static_cast<size_t>(count * n) * sizeof(uint16_t),
                             kChunk * sizeof(uint16_t));
    }
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  const size_t elems =
      static_cast<size_t>(t["logits"].shape[0] * t.iparam("topk") * t["y"].shape[1]);  // [R, N]
  const int buffers = kAlgo == algo::stage ? 2 : kAlgo == algo::push ? 1 : 0;
  for (int b = 0; b < buffers; ++b)
    if (!(g_stage[b] = comm.alloc_array<uint16_t>(elems))) return 1;
  return synced ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& logits = t["logits"];
  const uint16_t* x = t["x"].ptr<const uint16_t>();
  const int64_t m = logits.shape[0], n = t["y"].shape[1], w = comm.world;
  const int e = static_cast<int>(t.iparam("E")), topk = static_cast<int>(t.iparam("topk"));
  const Splits sp{w, m * topk, m * topk / w, e / w};
  uint16_t* y = t["y"].ptr<uint16_t>();
  if (kAlgo == algo::pull) {
    const Routing r = route(logits.ptr<const float>(), m, e, topk);
    g_sync.wait(comm);  // every holder's x is this call's
    auto held = [&](int64_t p) {
      int64_t d, row;
      sp.locate(comm.rank, p, &d, &row);
      return comm.peer(x, static_cast<int>(d)) + row * n;
    };
    combine(r, held, y, m, n, topk);
    g_sync.wait(comm);  // every peer is done reading our x
    return 0;
  }
  uint16_t* stage = g_stage[kAlgo == algo::stage ? g_calls++ & 1u : 0];
  push_blocks(comm, sp, x, stage, n);
  const Routing r = route(logits.ptr<const float>(), m, e, topk);  // while the peers push
  g_sync.wait(comm);  // every block for our tokens is in our buffer
  combine(
      r, [&](int64_t p) { return stage + p * n; }, y, m, n, topk);
  if (kAlgo == algo::push) g_sync.wait(comm);  // nobody rewrites our buffer before we read it
  return 0;
}
