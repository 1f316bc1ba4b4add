// broadcast on the host backend, with the knobs of kforge's template search: y(every
// rank) = x(root). pull: after a barrier (the root's x is ready), every rank copies the
// root's x into its own y. push: after a barrier (every y is ready for this call), the
// root copies its x into every rank's y. A final barrier either way.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

#include <sched.h>

#include <kf/kf.h>

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

// A counting barrier: one counter in rank 0's heap that only grows. Barrier number k
// (from 1) is passed when it reaches k * world, so it never needs a reset.
uint32_t* g_count = nullptr;
uint32_t g_passed = 0;

void sync_all(const kf::Comm& comm) {
  std::atomic_ref<uint32_t> count(*comm.peer(g_count, 0));
  const uint32_t target = ++g_passed * static_cast<uint32_t>(comm.world);
  count.fetch_add(1);
  while (count.load() < target) sched_yield();
}

// Copies `bytes` in steps of kChunk elements of `elem` bytes.
void chunked_copy(char* dst, const char* src, size_t bytes, size_t elem) {
  const size_t step = kChunk * elem;
  for (size_t off = 0; off < bytes; off += step) std::memcpy(dst + off, src + off, std::min(step, bytes - off));
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  g_count = comm.signals(1);
  return g_count ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const int root = static_cast<int>(t.iparam("root", 0));
  sync_all(comm);
  if (kAlgo == algo::pull) {
    chunked_copy(y.ptr<char>(), comm.peer(x.ptr<const char>(), root), x.bytes(), 4);
  } else if (comm.rank == root) {
    for (int k = 1; k <= comm.world; ++k)
      chunked_copy(comm.peer(y.ptr<char>(), (root + k) % comm.world), x.ptr<const char>(), x.bytes(), 4);
  }
  sync_all(comm);
  return 0;
}
