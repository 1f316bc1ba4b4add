// reduce_scatter on the host backend, with the knobs of kforge's template search: y(rank r)
// = sum over ranks s of chunk r of x(s), in float in rank order.
// pull: after a barrier (every x is ready), sum chunk r of every peer's x from its heap;
// a second barrier keeps our x unread-from before the next call rewrites it.
// push: copy chunk c of our x into slot `rank` of rank c's staging buffer (safe before
// any barrier: the last call's final barrier came after every sum), barrier, sum our
// slots, barrier.
#include <kf/host.h>
#include <kf/kf.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

// Knobs (kforge's template search sets them with #defines in front): who moves the bytes
// (pull: read the peers' inputs; push: write into the peers' buffers) and how many
// elements one step handles. Every value is correct; they change the access pattern.
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
using kf::host::chunked_copy;

void* g_stage = nullptr;  // push: world slots of y's size, one per source rank

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  if (kAlgo == algo::push) g_stage = comm.alloc(t["x"].bytes());  // x is world chunks long
  return synced && (kAlgo == algo::pull || g_stage) ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const bool bf16 = x.dtype == kf::DType::bf16;
  const size_t elem = bf16 ? 2 : 4;
  const size_t chunk = y.bytes();
  std::vector<const void*> src(static_cast<size_t>(comm.world));
  if (kAlgo == algo::push) {
    char* stage = static_cast<char*>(g_stage);
    for (int k = 1; k <= comm.world; ++k) {
      const int c = (comm.rank + k) % comm.world;
      chunked_copy(comm.peer(stage, c) + static_cast<size_t>(comm.rank) * chunk,
                   x.ptr<const char>() + static_cast<size_t>(c) * chunk, chunk, kChunk * elem);
    }
    for (int r = 0; r < comm.world; ++r) src[r] = stage + static_cast<size_t>(r) * chunk;
  } else {
    for (int r = 0; r < comm.world; ++r)
      src[r] = comm.peer(x.ptr<const char>(), r) + static_cast<size_t>(comm.rank) * chunk;
  }
  g_sync.wait(comm);  // pull: every x is ready; push: every slot of our staging buffer is written
  kf::host::sum_slots(y.data, src.data(), comm.world, static_cast<size_t>(y.numel), bf16, kChunk);
  g_sync.wait(comm);  // nobody rewrites what we read before we have summed it
  return 0;
}
