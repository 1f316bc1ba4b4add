// quantized_grad_all_reduce on the host backend, with the knobs of kforge's template search:
// y = the mean over ranks of each rank's block-wise int8 quantize-dequantize of its x, the
// codes formed in fp32 as problem.json spells out, summed in float in rank order (the same
// bits on every rank).
// pull: quantize-dequantize our x into our fp32 buffer d, barrier (every d is ready), sum
// every peer's d straight from its heap; a second barrier keeps our d unread-from before the
// next call rewrites it.
// push_q8: quantize our x into int8 codes and one fp32 scale per block, and copy them into
// slot `rank` of every peer's staging buffer (about a quarter of pull's bytes; safe before
// any barrier: every peer finished reading its slots before the last call's final
// barrier), barrier, dequantize and sum our slots, barrier.
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

// Knobs (kforge's template search sets them with #defines in front): what crosses between
// ranks (pull: fp32 values read from the peers; push_q8: codes and scales written into
// them) and how many elements one copy or summing step handles. Every value is correct;
// they change the bytes moved and the access pattern.
#ifndef KF_ALGO
#define KF_ALGO pull  // pull | push_q8
#endif
#ifndef KF_CHUNK_ELEMS
#define KF_CHUNK_ELEMS 65536
#endif

namespace {

enum class algo { pull, push_q8 };
constexpr algo kAlgo = algo::KF_ALGO;
constexpr size_t kChunk = KF_CHUNK_ELEMS;
static_assert(kChunk > 0, "KF_CHUNK_ELEMS must be positive");

kf::host::Barrier g_sync;  // see <kf/host.h>
char* g_buf = nullptr;     // pull: our d [n floats]; push_q8: world slots of slot_bytes
size_t g_n = 0, g_block = 1, g_blocks = 0;
std::vector<char> g_mine;  // push_q8: our own slot, built before it is copied out

// push_q8's slot: n int8 codes, padded to 4 bytes, then one fp32 scale per block.
size_t codes_bytes() {
  return (g_n + 3) / 4 * 4;
}
size_t slot_bytes() {
  return codes_bytes() + 4 * g_blocks;
}

// Block b's scale and codes: scale = max(amax, 1e-8) / 127 and code = x / scale rounded to
// even, clamped to +-127, both divisions in fp32 (what the reference rounds).
float quantize_block(const float* x, size_t begin, size_t end, int8_t* codes) {
  float amax = 0.0f;
  for (size_t i = begin; i < end; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float scale = std::max(amax, 1e-8f) / 127.0f;
  for (size_t i = begin; i < end; ++i)
    codes[i] = static_cast<int8_t>(std::clamp(std::nearbyint(x[i] / scale), -127.0f, 127.0f));
  return scale;
}

// pull: d = code * scale for every element of our x.
void dequantized(const float* x, float* d) {
  std::vector<int8_t> codes(g_n);
  for (size_t b = 0; b < g_blocks; ++b) {
    const size_t begin = b * g_block, end = std::min(g_n, begin + g_block);
    const float scale = quantize_block(x, begin, end, codes.data());
    for (size_t i = begin; i < end; ++i) d[i] = static_cast<float>(codes[i]) * scale;
  }
}

// push_q8: our slot (codes, then scales) into g_mine.
void encode(const float* x) {
  int8_t* codes = reinterpret_cast<int8_t*>(g_mine.data());
  float* scales = reinterpret_cast<float*>(g_mine.data() + codes_bytes());
  for (size_t b = 0; b < g_blocks; ++b)
    scales[b] = quantize_block(x, b * g_block, std::min(g_n, (b + 1) * g_block), codes);
}

// y = (sum over r of value(r, i)) / world, kChunk elements at a time, ranks in order.
template <class Value>
void average(float* y, int world, Value value) {
  for (size_t c = 0; c < g_n; c += kChunk)
    for (size_t i = c; i < g_n && i < c + kChunk; ++i) {
      float s = 0.0f;
      for (int r = 0; r < world; ++r) s += value(r, i);
      y[i] = s / static_cast<float>(world);
    }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  g_n = static_cast<size_t>(t["x"].numel);
  g_block = static_cast<size_t>(t.iparam("block"));
  if (g_block < 1) return 1;
  g_blocks = (g_n + g_block - 1) / g_block;
  if (kAlgo == algo::push_q8) g_mine.assign(slot_bytes(), 0);
  g_buf = static_cast<char*>(comm.alloc(kAlgo == algo::pull ? 4 * g_n : slot_bytes() * comm.world));
  return synced && g_buf ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const float* x = t["x"].ptr<const float>();
  float* y = t["y"].ptr<float>();
  if (static_cast<size_t>(t["x"].numel) != g_n) return 1;  // not what kf_setup sized for
  if (kAlgo == algo::pull) {
    dequantized(x, reinterpret_cast<float*>(g_buf));
    g_sync.wait(comm);  // every rank's d is this call's
    std::vector<const float*> d(static_cast<size_t>(comm.world));
    for (int r = 0; r < comm.world; ++r) d[r] = reinterpret_cast<const float*>(comm.peer(g_buf, r));
    average(y, comm.world, [&](int r, size_t i) { return d[r][i]; });
  } else {
    encode(x);
    const size_t slot = slot_bytes(), mine = static_cast<size_t>(comm.rank) * slot;
    for (int k = 1; k <= comm.world; ++k)  // peers first, starting after us
      kf::host::chunked_copy(comm.peer(g_buf, (comm.rank + k) % comm.world) + mine, g_mine.data(),
                             slot, kChunk);
    g_sync.wait(comm);  // every slot of our staging buffer is this call's
    average(y, comm.world, [&](int r, size_t i) {
      const char* s = g_buf + static_cast<size_t>(r) * slot;
      const float scale = reinterpret_cast<const float*>(s + codes_bytes())[i / g_block];
      return static_cast<float>(reinterpret_cast<const int8_t*>(s)[i]) * scale;
    });
  }
  g_sync.wait(comm);  // nobody rewrites what a peer reads before the peer has summed it
  return 0;
}
