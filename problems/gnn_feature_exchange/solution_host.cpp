// gnn_feature_exchange on the host backend, with the knobs of kforge's template search:
// out(r) chunk k row i = features(s)[ids(s)[j * rows + i]] with s = (r + k) mod world and
// j = (world - k) mod world (problem.json has the contract). Nobody materializes the
// gathered block: whoever moves a row reads it straight from the features it names.
// pull: after a barrier (every features and ids are ready), rank r reads each chunk's
// rows from its sender. push: after a barrier (every out is ready for this call), rank s
// writes its chunk j into chunk (world - j) mod world of rank (s + j) mod world. A final
// barrier either way: pull, our inputs stay until read; push, our out is complete.
#include <kf/host.h>
#include <kf/kf.h>

#include <cstdint>
#include <cstring>

// Knobs (kforge's template search sets them with #defines in front): who moves the rows
// (pull: the receiver; push: the sender) and how many elements one copy step moves.
// Every value is correct; they change the access pattern.
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

struct Shape {
  int64_t world, rows, hidden;
  size_t row_bytes() const { return static_cast<size_t>(hidden) * sizeof(uint16_t); }
};

// Rows ids[0 .. rows - 1] of features into dst's rows 0 .. rows - 1.
void copy_chunk(uint16_t* dst, const uint16_t* features, const int64_t* ids, const Shape& s) {
  for (int64_t i = 0; i < s.rows; ++i)
    chunked_copy(reinterpret_cast<char*>(dst + i * s.hidden),
                 reinterpret_cast<const char*>(features + ids[i] * s.hidden), s.row_bytes(),
                 kChunk * sizeof(uint16_t));
}

// Pull: our chunk k from sender (rank + k) mod world, its chunk (world - k) mod world;
// peers first, starting after us, so the ranks do not all read one peer at once.
void pull(const kf::Comm& comm, const uint16_t* features, const int64_t* ids, uint16_t* out,
          const Shape& s) {
  for (int64_t k = 1; k <= s.world; ++k) {
    const int64_t kk = k % s.world, j = (s.world - kk) % s.world;
    const int src = static_cast<int>((comm.rank + kk) % s.world);
    copy_chunk(out + kk * s.rows * s.hidden, comm.peer(features, src),
               comm.peer(ids, src) + j * s.rows, s);
  }
}

// Push: our chunk j to rank (rank + j) mod world, as its chunk (world - j) mod world.
void push(const kf::Comm& comm, const uint16_t* features, const int64_t* ids, uint16_t* out,
          const Shape& s) {
  for (int64_t j = 1; j <= s.world; ++j) {
    const int64_t jj = j % s.world, k = (s.world - jj) % s.world;
    const int dst = static_cast<int>((comm.rank + jj) % s.world);
    copy_chunk(comm.peer(out, dst) + k * s.rows * s.hidden, features, ids + jj * s.rows, s);
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  return g_sync.setup(comm) ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& features = t["features"];
  const Shape s{comm.world, features.shape[0] / comm.world, features.shape[1]};
  const uint16_t* f = features.ptr<const uint16_t>();
  const int64_t* ids = t["ids"].ptr<const int64_t>();
  g_sync.wait(comm);  // pull: every input is ready; push: every out is ours to write
  if (kAlgo == algo::pull)
    pull(comm, f, ids, t["out"].ptr<uint16_t>(), s);
  else
    push(comm, f, ids, t["out"].ptr<uint16_t>(), s);
  g_sync.wait(comm);  // pull: nobody still reads our inputs; push: our out is complete
  return 0;
}
