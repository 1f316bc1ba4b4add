// reduce on the host backend, with the knobs of kforge's template search: the root's y =
// the sum over ranks of x, summed in float in rank order; every other rank's y = its x.
// pull: after a barrier (every peer's x is ready), the root sums the peers' x straight
// from their heaps while the others copy x into y; a second barrier keeps every x
// unchanged until the root has read it.
// push: every rank copies its x into slot `rank` of the root's staging buffer (safe
// before any barrier: the root finished summing its staging buffer before the last call's
// final barrier) and into its own y, barrier, the root sums its slots, barrier.
#include <kf/host.h>
#include <kf/kf.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

// Knobs (kforge's template search sets them with #defines in front): who moves the bytes
// (pull: the root reads the peers' inputs; push: the peers write into the root's buffer)
// and how many elements one step handles. Every value is correct; they change the access
// pattern.
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

void* g_stage = nullptr;  // push: world slots of x's size, one per source rank (the root's)

// Where the root finds rank r's x: its heap (pull) or slot r of the staging buffer (push;
// its own x stays where it is).
std::vector<const void*> sources(const kf::Comm& comm, const kf::Tensor& x) {
  std::vector<const void*> src(static_cast<size_t>(comm.world));
  for (int r = 0; r < comm.world; ++r)
    src[r] = kAlgo == algo::push && r != comm.rank
                 ? static_cast<const char*>(g_stage) + static_cast<size_t>(r) * x.bytes()
                 : comm.peer(x.ptr<const char>(), r);
  return src;
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const bool synced = g_sync.setup(comm);
  if (kAlgo == algo::push) g_stage = comm.alloc(t["x"].bytes() * static_cast<size_t>(comm.world));
  return synced && (kAlgo == algo::pull || g_stage) ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const int root = static_cast<int>(t.iparam("root", 0));
  const bool bf16 = x.dtype == kf::DType::bf16;
  const size_t step = kChunk * (bf16 ? 2 : 4);
  if (comm.rank != root) {
    if (kAlgo == algo::push) {
      char* slot =
          comm.peer(static_cast<char*>(g_stage), root) + static_cast<size_t>(comm.rank) * x.bytes();
      chunked_copy(slot, x.ptr<const char>(), x.bytes(), step);
    }
    chunked_copy(y.ptr<char>(), x.ptr<const char>(), x.bytes(), step);  // the clone
  }
  g_sync.wait(comm);  // pull: every x is ready; push: every slot of the root's buffer is written
  if (comm.rank == root) {
    const std::vector<const void*> src = sources(comm, x);
    kf::host::sum_slots(y.data, src.data(), comm.world, static_cast<size_t>(x.numel), bf16, kChunk);
  }
  g_sync.wait(comm);  // nobody rewrites what the root reads before it has summed it
  return 0;
}
