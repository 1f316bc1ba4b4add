// conv2d_boundary_exchange on the host backend, with the knobs of kforge's template search.
// Only the neighbours' boundary rows move (not the reference's all-gather of every rank's
// rows); the convolution then runs locally over an fp32 copy of our rows padded with them.
// pull: barrier (the neighbours' x are this call's), copy the previous rank's last row and
// the next rank's first row of every plane into a private buffer, barrier (nobody's x
// changes while a neighbour still copies from it), convolve.
// push: write our last row into the next rank's halo slot and our first row into the
// previous rank's, barrier (our slots hold this call's rows), convolve: one barrier per
// call. The slots alternate by call parity: a rank writes a neighbour's slot of parity q
// again only in the call after next, which it reaches only once that neighbour has
// arrived at the next call's barrier, so after it finished reading the slot.
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cstdint>
#include <vector>

// Knobs (kforge's template search sets them with #defines in front): who moves the rows
// (pull: read the neighbours' x; push: write into the neighbours' halo slots) and how many
// elements one copy step handles. Every value is correct; they change the access pattern.
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

kf::host::Barrier g_sync;     // see <kf/host.h>
uint16_t* g_slots = nullptr;  // push: [2 parities][2 sides: above, below][B * C][W]
uint64_t g_calls = 0;         // push: calls with an exchange, for the parity

using kf::host::bf16_to_float;
using kf::host::chunked_copy;
using kf::host::float_to_bf16;

struct Dims {
  int64_t b, c, h, w;
  int64_t planes() const { return b * c; }
};

// n rows of w bf16: dst row p = src row p * stride (in rows), `kChunk` elements a step.
void copy_rows(uint16_t* dst, const uint16_t* src, int64_t n, int64_t stride, int64_t w) {
  for (int64_t p = 0; p < n; ++p)
    chunked_copy(reinterpret_cast<char*>(dst + p * w),
                 reinterpret_cast<const char*>(src + p * stride * w), static_cast<size_t>(w) * 2,
                 kChunk * 2);
}

// One image's input as fp32 [c][h + 2][w + 2]: its rows with the halo rows above and below
// (nullptr: zeros) and a zero column on either side.
void pad_image(std::vector<float>& pad, const uint16_t* x, const uint16_t* above,
               const uint16_t* below, const Dims& d) {
  const int64_t pw = d.w + 2, ph = d.h + 2;
  std::fill(pad.begin(), pad.end(), 0.0f);
  for (int64_t i = 0; i < d.c; ++i) {
    float* plane = &pad[i * ph * pw];
    for (int64_t col = 0; col < d.w; ++col) {
      if (above) plane[col + 1] = bf16_to_float(above[i * d.w + col]);
      if (below) plane[(ph - 1) * pw + col + 1] = bf16_to_float(below[i * d.w + col]);
      for (int64_t r = 0; r < d.h; ++r)
        plane[(r + 1) * pw + col + 1] = bf16_to_float(x[(i * d.h + r) * d.w + col]);
    }
  }
}

// y = bias + the 3x3 convolution of every image, over the padded fp32 copy: each weight
// scales a shifted block of input rows into an fp32 accumulator plane (unit stride).
void convolve(const uint16_t* x, const uint16_t* above, const uint16_t* below,
              const uint16_t* weight, const uint16_t* bias, uint16_t* y, const Dims& d) {
  const int64_t pw = d.w + 2, ph = d.h + 2, hw = d.h * d.w;
  std::vector<float> wf(static_cast<size_t>(d.c * d.c * 9));
  for (size_t k = 0; k < wf.size(); ++k) wf[k] = bf16_to_float(weight[k]);
  std::vector<float> pad(static_cast<size_t>(d.c * ph * pw)), acc(static_cast<size_t>(hw));
  for (int64_t b = 0; b < d.b; ++b) {
    const int64_t p0 = b * d.c;  // the image's first plane
    pad_image(pad, x + p0 * hw, above ? above + p0 * d.w : nullptr,
              below ? below + p0 * d.w : nullptr, d);
    for (int64_t o = 0; o < d.c; ++o) {
      std::fill(acc.begin(), acc.end(), bf16_to_float(bias[o]));
      for (int64_t i = 0; i < d.c; ++i)
        for (int64_t k = 0; k < 9; ++k) {
          const float wv = wf[(o * d.c + i) * 9 + k];
          const float* in = &pad[i * ph * pw + k / 3 * pw + k % 3];  // X[kh - 1][kw - 1]
          for (int64_t r = 0; r < d.h; ++r)
            for (int64_t col = 0; col < d.w; ++col) acc[r * d.w + col] += wv * in[r * pw + col];
        }
      uint16_t* out = y + (p0 + o) * hw;
      for (int64_t e = 0; e < hw; ++e) out[e] = float_to_bf16(acc[e]);
    }
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  const kf::Tensor& x = t["x"];
  if (kAlgo == algo::push)
    g_slots =
        comm.alloc_array<uint16_t>(static_cast<size_t>(4 * x.shape[0] * x.shape[1] * x.shape[3]));
  return synced && (kAlgo == algo::pull || g_slots) ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& xt = t["x"];
  const Dims d{xt.shape[0], xt.shape[1], xt.shape[2], xt.shape[3]};
  const int64_t n = d.planes(), set = n * d.w;  // rows per side, elements per side
  const uint16_t* x = xt.ptr<const uint16_t>();
  const bool has_prev = comm.rank > 0, has_next = comm.rank + 1 < comm.world;
  std::vector<uint16_t> pulled;
  const uint16_t* halo = nullptr;  // [2 sides][n][w]: the rows above ours, then below
  if (comm.world > 1 && kAlgo == algo::push) {
    uint16_t* slots = g_slots + (g_calls++ % 2) * 2 * set;  // this call's parity
    // Our last rows are the next rank's rows above; our first rows the previous rank's below.
    if (has_next) copy_rows(comm.peer(slots, comm.rank + 1), x + (d.h - 1) * d.w, n, d.h, d.w);
    if (has_prev) copy_rows(comm.peer(slots, comm.rank - 1) + set, x, n, d.h, d.w);
    g_sync.wait(comm);  // every neighbour has written our slots
    halo = slots;
  } else if (comm.world > 1) {
    pulled.resize(static_cast<size_t>(2 * set));
    g_sync.wait(comm);  // the neighbours' x are this call's
    if (has_prev)
      copy_rows(pulled.data(), comm.peer(x, comm.rank - 1) + (d.h - 1) * d.w, n, d.h, d.w);
    if (has_next) copy_rows(pulled.data() + set, comm.peer(x, comm.rank + 1), n, d.h, d.w);
    g_sync.wait(comm);  // nobody's x changes while a neighbour still copies from it
    halo = pulled.data();
  }
  convolve(x, has_prev ? halo : nullptr, has_next ? halo + set : nullptr,
           t["weight"].ptr<const uint16_t>(), t["bias"].ptr<const uint16_t>(),
           t["y"].ptr<uint16_t>(), d);
  return 0;
}
