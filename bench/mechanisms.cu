// bench/mechanisms.cu: kforge's transfer mechanisms within ONE GPU, local HBM to local HBM,
// one process: no NVLink, so these are the mechanisms' own ceilings and per-call costs, sized
// for an H200 (132 SMs, 60 MB L2). Build and run on the GPU machine (well under a minute):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I primitives/include -o /tmp/mech bench/mechanisms.cu
//   /tmp/mech
// It prints, as plain text for bench/RESULTS.md: (1) GB/s by message size x block count for
// "reg" (kf::copy: 16-byte loads/stores, grid-stride, 512 threads/block) and "tma" (one thread
// per block: kf::tma_load into shared memory, then kf::tma_store, two 16 KiB tiles), and by size
// for "ce" (cudaMemcpyAsync D2D via kf::ce_copy); (2) time per call of 16 KiB / 256 KiB / 4 MiB
// copies; (3) ns per kf::barrier at world 1 and world 2 (two blocks of one kernel).
// Conventions: sizes are binary; GB/s = message bytes / time per copy / 1e9 (each byte counted
// once). A measurement is R back-to-back calls between CUDA events (R covers >= 2 ms, 3 <= R <=
// 2000) after a warm-up; the median of 3 is shown. Call i copies the next message-sized slot of
// 1 GiB source and destination pools, so messages smaller than L2 are not L2 hits.
// Self-check: every cell's warm-up call is verified against an index-dependent source pattern
// (destination and a guard after it poisoned with 0xFF first), as are odd sizes that exercise
// the tails. Exit code 1 on a wrong result, 2 on a CUDA error.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <kf/kf.cuh>
#include <string>

namespace {

constexpr int64_t kKiB = 1024, kMiB = 1024 * kKiB, kGiB = 1024 * kMiB;

struct Config {
  int64_t sizes[6] = {4 * kKiB, 64 * kKiB, kMiB, 16 * kMiB, 256 * kMiB, kGiB};
  int blocks[9] = {1, 2, 4, 8, 16, 32, 66, 132, 264};  // 66/132/264: half, all, twice the SMs
  int64_t latency_sizes[3] = {16 * kKiB, 256 * kKiB, 4 * kMiB};
  int64_t pool_bytes = kGiB;  // each of source and destination: holds the largest message
  float min_ms = 2.0f;        // GPU time one measurement covers at least
  int min_reps = 3, max_reps = 2000;
  int trials = 3;  // report the median of this many measurements
  int barrier_iters = 10000;
};
constexpr Config kCfg{};
static_assert(kCfg.trials <= 8, "medians are taken over a double[8]");
constexpr int kRegThreads = 512;
constexpr int kTmaThreads = 32;  // one warp is the smallest block; only its thread 0 issues
constexpr int kBarrierThreads = 64;
constexpr int64_t kTile = 16 * kKiB;
constexpr int64_t kGuard = 256;  // bytes after a message that a copy must leave alone

void ck(cudaError_t e, const char* what, int line) {
  if (e == cudaSuccess) return;
  std::printf("FAIL: CUDA error \"%s\" at line %d: %s\n", cudaGetErrorString(e), line, what);
  std::exit(2);
}
#define CK(x) ck((x), #x, __LINE__)

// ---- kernels -----------------------------------------------------------------------------
// A distinct value per 32-bit word (an odd multiplier is a bijection mod 2^32), so a dropped,
// shifted or duplicated word shows. The one index that maps to the poison 0xFFFFFFFF is
// 0xF174D0AF, far beyond the pool's 2^28 words.
__host__ __device__ uint32_t pattern(int64_t word) {
  return static_cast<uint32_t>(word) * 2654435761u;
}
__global__ void fill(uint32_t* p, int64_t words) {
  for (int64_t i = kf::grid_tid(); i < words; i += kf::grid_threads()) p[i] = pattern(i);
}
// Counts the words of dst[first, first + words + guard) that are not the source pattern
// (inside the message) or not the poison (in the guard after it).
__global__ void verify(const uint32_t* dst, int64_t first, int64_t words, int64_t guard,
                       unsigned long long* bad) {
  for (int64_t i = kf::grid_tid(); i < words + guard; i += kf::grid_threads()) {
    const uint32_t want = i < words ? pattern(first + i) : 0xFFFFFFFFu;
    if (dst[first + i] != want) atomicAdd(bad, 1ull);
  }
}

__global__ void __launch_bounds__(kRegThreads) reg_copy(float* dst, const float* src, int64_t n) {
  kf::copy(dst, src, n, kf::grid_tid(), kf::grid_threads());
}

// Block b moves tiles b, b + gridDim.x, ... through shared memory. Its k-th tile uses buffer
// k & 1, so the load of tile k overlaps the store of tile k - 1 from the other buffer. The
// last tile may be shorter; bytes and both pointers must be multiples of 16 (TMA's rule).
__global__ void __launch_bounds__(kTmaThreads) tma_copy(char* dst, const char* src, int64_t bytes) {
  __shared__ alignas(128) char buf[2][kTile];
  __shared__ uint64_t bar[2];
  if (threadIdx.x != 0) return;
  kf::mbar_init(&bar[0], 1);
  kf::mbar_init(&bar[1], 1);
  const int64_t tiles = kf::ceil_div(bytes, kTile);
  int k = 0;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x, ++k) {
    const int b = k & 1;
    const int64_t off = t * kTile;
    const uint32_t len = static_cast<uint32_t>(kf::min64(kTile, bytes - off));
    kf::tma_wait_read<1>();  // only tile k - 1's store may still read: buf[b] is free
    kf::mbar_arrive_expect_tx(&bar[b], len);
    kf::tma_load(buf[b], src + off, len, &bar[b]);
    kf::mbar_wait(&bar[b], (k >> 1) & 1);  // the (k >> 1)-th use of buf[b] has landed
    kf::tma_store(dst + off, buf[b], len);
    kf::tma_commit();
  }
  kf::tma_wait();  // the stores read shared memory, which dies with the block
}

// Block r plays rank r of a world of gridDim.x ranks.
struct Ranks {
  kf::SignalSet rank[2];
};
__global__ void barrier_loop(Ranks r, uint32_t first_epoch, int iters) {
  const kf::SignalSet& me = r.rank[blockIdx.x];
  for (int i = 0; i < iters; ++i) kf::barrier(me, 0, first_epoch + static_cast<uint32_t>(i));
}

// ---- host side ---------------------------------------------------------------------------
enum class Mech { kReg, kTma, kCe };
const char* name(Mech m) {
  return m == Mech::kReg ? "reg" : m == Mech::kTma ? "tma" : "ce";
}

struct Copy {
  Mech mech;
  int blocks;  // kernels only
  int64_t bytes;

  void launch(char* dst, const char* src) const {
    if (mech == Mech::kReg)
      reg_copy<<<blocks, kRegThreads>>>(reinterpret_cast<float*>(dst),
                                        reinterpret_cast<const float*>(src), bytes / 4);
    else if (mech == Mech::kTma)
      tma_copy<<<blocks, kTmaThreads>>>(dst, src, bytes);
    else
      CK(kf::ce_copy(dst, src, static_cast<size_t>(bytes), 0));
  }
  // Some blocks get no work: more blocks than 16 KiB tiles, or than 512-vector chunks.
  bool idle_blocks() const {
    if (mech == Mech::kTma) return blocks > kf::ceil_div(bytes, kTile);
    return mech == Mech::kReg && blocks > kf::ceil_div(bytes, 16 * kRegThreads);
  }
};

// Message size m has pool / stride(m) slots, at the same offsets in source and destination;
// each call takes the next one, so back-to-back calls touch memory not in L2.
struct Pool {
  char* src = nullptr;
  char* dst = nullptr;
  int64_t bytes = 0;
  int64_t cursor = 0;
  static int64_t stride(int64_t m) { return kf::round_up(m, 256); }
  int64_t next(int64_t m) { return (cursor++ % (bytes / stride(m))) * stride(m); }
};

struct Bench {
  Pool pool;
  cudaEvent_t start, stop;
  unsigned long long* bad;  // device counter for verify
  int failures = 0;
};

std::string label(int64_t bytes) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  for (; u < 3 && bytes >= 1024 && bytes % 1024 == 0; ++u) bytes /= 1024;
  return std::to_string(bytes) + " " + unit[u];
}
double gbps(int64_t bytes, double ms) {
  return static_cast<double>(bytes) / (ms * 1e6);
}

// Milliseconds of GPU time for the work that enqueue() puts on the default stream.
template <class F>
float elapsed_ms(Bench& b, F&& enqueue) {
  CK(cudaEventRecord(b.start));
  enqueue();
  CK(cudaEventRecord(b.stop));
  CK(cudaEventSynchronize(b.stop));
  CK(cudaGetLastError());  // a failed launch anywhere in the batch
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, b.start, b.stop));
  return ms;
}
// Milliseconds for `reps` back-to-back calls of c, each on the next pool slot.
float time_calls(Bench& b, const Copy& c, int reps) {
  return elapsed_ms(b, [&] {
    for (int i = 0; i < reps; ++i) {
      const int64_t off = b.pool.next(c.bytes);
      c.launch(b.pool.dst + off, b.pool.src + off);
    }
  });
}
double median(double* t, int n) {
  std::sort(t, t + n);
  return t[n / 2];
}

// Milliseconds per call: a ramp (1, 4, 16, ... calls) estimates one call's time, which fixes
// R; then the median of kCfg.trials measurements of R calls.
double ms_per_call(Bench& b, const Copy& c) {
  int reps = 1;
  float ms = time_calls(b, c, reps);
  while (ms < kCfg.min_ms / 4 && reps < kCfg.max_reps) {
    reps = std::min(reps * 4, kCfg.max_reps);
    ms = time_calls(b, c, reps);
  }
  const double per_call = std::max(static_cast<double>(ms), 1e-4) / reps;
  reps = static_cast<int>(std::min<double>(kCfg.max_reps, kCfg.min_ms / per_call + 1));
  reps = std::max(reps, kCfg.min_reps);
  double t[8];
  for (int i = 0; i < kCfg.trials; ++i) t[i] = time_calls(b, c, reps) / static_cast<double>(reps);
  return median(t, kCfg.trials);
}

// Poisons dst[off, off + bytes + guard), runs c once at off and verifies; a FAIL line says
// what went wrong. It is also the warm-up of a measurement (the first launch loads a module).
bool check(Bench& b, const Copy& c, int64_t off) {
  CK(cudaMemset(b.pool.dst + off, 0xFF, static_cast<size_t>(c.bytes + kGuard)));
  c.launch(b.pool.dst + off, b.pool.src + off);
  CK(cudaGetLastError());
  CK(cudaMemset(b.bad, 0, sizeof(*b.bad)));
  verify<<<264, 512>>>(reinterpret_cast<const uint32_t*>(b.pool.dst), off / 4, c.bytes / 4,
                       kGuard / 4, b.bad);
  CK(cudaGetLastError());
  unsigned long long bad = 0;
  CK(cudaMemcpy(&bad, b.bad, sizeof(bad), cudaMemcpyDeviceToHost));
  if (bad == 0) return true;
  std::printf(
      "FAIL: %s, %lld bytes at offset %lld, %d blocks: %llu of %lld words (+ %lld guard) "
      "wrong\n",
      name(c.mech), static_cast<long long>(c.bytes), static_cast<long long>(off), c.blocks, bad,
      static_cast<long long>(c.bytes / 4), static_cast<long long>(kGuard / 4));
  ++b.failures;
  return false;
}

// Rows: message sizes; columns: block counts; cells: GB/s. Each cell's first call is checked.
void bandwidth_matrix(Bench& b, Mech m, const char* what) {
  std::printf(
      "\n%s: %s\nGB/s by message size (rows) and blocks (columns); '*': some blocks idle "
      "(more blocks than %s)\n%-8s|",
      name(m), what, m == Mech::kTma ? "16 KiB tiles" : "512-vector chunks", "size");
  for (int blocks : kCfg.blocks) std::printf(" %7d ", blocks);
  std::printf("| check\n");
  for (int64_t bytes : kCfg.sizes) {
    std::string row;  // printed whole, after any FAIL line of its cells
    bool ok = true;
    for (int blocks : kCfg.blocks) {
      const Copy c{m, blocks, bytes};
      ok = check(b, c, b.pool.next(bytes)) && ok;
      char cell[32];
      std::snprintf(cell, sizeof cell, " %7.1f%c", gbps(bytes, ms_per_call(b, c)),
                    c.idle_blocks() ? '*' : ' ');
      row += cell;
    }
    std::printf("%-8s|%s| check %s\n", label(bytes).c_str(), row.c_str(), ok ? "ok" : "FAIL");
    std::fflush(stdout);
  }
}

void ce_table(Bench& b) {
  std::printf("\nce: cudaMemcpyAsync device to device (kf::ce_copy), no SM used\n");
  std::printf("%-8s| %8s | %11s | check\n", "size", "GB/s", "us per call");
  for (int64_t bytes : kCfg.sizes) {
    const Copy c{Mech::kCe, 0, bytes};
    const bool ok = check(b, c, b.pool.next(bytes));
    const double ms = ms_per_call(b, c);
    std::printf("%-8s| %8.1f | %11.2f | check %s\n", label(bytes).c_str(), gbps(bytes, ms),
                ms * 1e3, ok ? "ok" : "FAIL");
  }
  std::fflush(stdout);
}

// Sizes and offsets that the head and tail paths must get right.
void odd_checks(Bench& b) {
  struct Odd {
    Mech mech;
    int64_t bytes, off;
    const char* why;
  };
  const Odd odd[] = {
      {Mech::kReg, 1000003 * 4, 0, "1000003 floats: scalar tail"},
      {Mech::kReg, 1000003 * 4, 8, "1000003 floats at +8 B: scalar head and tail"},
      {Mech::kTma, 1000016, 0, "61 tiles + a 592 B tile"},
      {Mech::kTma, 48, 0, "one 48 B copy"},
      {Mech::kCe, 1000003 * 4, 4, "1000003 floats at +4 B"},
  };
  std::printf("\nodd sizes (kernels checked at 1, 132 and 264 blocks)\n");
  for (const Odd& o : odd) {
    bool ok = true;
    for (int blocks : {1, 132, 264}) {
      ok = check(b, Copy{o.mech, blocks, o.bytes}, o.off) && ok;
      if (o.mech == Mech::kCe) break;  // blocks mean nothing to the copy engine
    }
    std::printf("%-3s %8lld B at offset %lld (%s): check %s\n", name(o.mech),
                static_cast<long long>(o.bytes), static_cast<long long>(o.off), o.why,
                ok ? "ok" : "FAIL");
  }
}

// reg gets one vector per thread (kf::grid_for), tma one tile per block, both capped at sms.
void latency_table(Bench& b, int sms) {
  std::printf(
      "\nper-call time of back-to-back calls, launch included (us per call; blocks in "
      "parentheses)\n%-8s| %15s | %15s | %8s | check\n",
      "size", "reg", "tma", "ce");
  for (int64_t bytes : kCfg.latency_sizes) {
    const int tma_blocks = static_cast<int>(std::min<int64_t>(kf::ceil_div(bytes, kTile), sms));
    const Copy c[3] = {{Mech::kReg, kf::grid_for(bytes / 16, kRegThreads, sms), bytes},
                       {Mech::kTma, tma_blocks, bytes},
                       {Mech::kCe, 0, bytes}};
    bool ok = true;
    double us[3];
    for (int i = 0; i < 3; ++i) {
      ok = check(b, c[i], b.pool.next(bytes)) && ok;
      us[i] = ms_per_call(b, c[i]) * 1e3;
    }
    std::printf("%-8s| %9.2f (%3d) | %9.2f (%3d) | %8.2f | check %s\n", label(bytes).c_str(), us[0],
                c[0].blocks, us[1], c[1].blocks, us[2], ok ? "ok" : "FAIL");
  }
  std::fflush(stdout);
}

// ns per kf::barrier with `world` blocks of one kernel, block r acting as rank r, the words
// laid out as in a symmetric heap (rank r's at words + 512 r). Flags are never reset, so
// epochs keep growing across runs (a stale larger value would pass a wait at once).
double barrier_ns(Bench& b, uint32_t* words, int world, uint32_t& epoch, bool& ok) {
  Ranks r{};
  for (int q = 0; q < world; ++q) {
    r.rank[q] = kf::SignalSet{words + 512 * q, {}, q, world, 1};
    for (int p = 0; p < world; ++p) r.rank[q].peer.ptr[p] = words + 512 * p;
  }
  double t[8];
  for (int i = -1; i < kCfg.trials; ++i) {  // i == -1: the warm-up
    const float ms = elapsed_ms(
        b, [&] { barrier_loop<<<world, kBarrierThreads>>>(r, epoch, kCfg.barrier_iters); });
    epoch += static_cast<uint32_t>(kCfg.barrier_iters);
    if (i >= 0) t[i] = ms * 1e6 / kCfg.barrier_iters;
  }
  ok = true;  // rank q's word from rank p holds the last epoch
  for (int q = 0; q < world; ++q) {
    uint32_t seen[2] = {};
    CK(cudaMemcpy(seen, words + 512 * q, world * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    for (int p = 0; p < world; ++p) ok = ok && seen[p] == epoch - 1;
  }
  return median(t, kCfg.trials);
}

void barriers(Bench& b) {
  uint32_t* words = nullptr;
  CK(cudaMalloc(&words, 4096));
  CK(cudaMemset(words, 0, 4096));
  uint32_t epoch = 1;  // zeroed words mean "not yet"
  std::printf("\nkf::barrier, %d threads per block, %d back to back (ns per barrier)\n",
              kBarrierThreads, kCfg.barrier_iters);
  const char* what[] = {"", "world 1 (a block with itself)", "world 2 (two blocks of one kernel)"};
  for (int world : {1, 2}) {
    bool ok = false;
    const double ns = barrier_ns(b, words, world, epoch, ok);
    std::printf("%-35s: %7.0f ns | check %s\n", what[world], ns, ok ? "ok" : "FAIL");
    b.failures += ok ? 0 : 1;
  }
  CK(cudaFree(words));
}

void print_header(const cudaDeviceProp& p) {
  int driver = 0, runtime = 0;
  CK(cudaDriverGetVersion(&driver));
  CK(cudaRuntimeGetVersion(&runtime));
  std::printf("kforge mechanisms: local HBM to local HBM on one GPU, one process (no NVLink)\n");
  std::printf("device: %s, %d SMs, L2 %d MB, %.0f GB; driver %d, runtime %d\n", p.name,
              p.multiProcessorCount, p.l2CacheSize >> 20, p.totalGlobalMem / 1e9, driver, runtime);
  if (p.multiProcessorCount != 132)
    std::printf("note: the block counts 66 / 132 / 264 assume an H200's 132 SMs\n");
  std::printf(
      "sizes binary (1 MiB = 2^20 B); GB/s = message bytes / time per copy / 1e9, each "
      "byte counted once;\nmedian of %d runs of R back-to-back calls (>= %.0f ms, %d <= R "
      "<= %d); call i copies the next\nmessage-sized slot of %lld MiB source and "
      "destination pools (no L2 reuse between calls)\n",
      kCfg.trials, kCfg.min_ms, kCfg.min_reps, kCfg.max_reps,
      static_cast<long long>(kCfg.pool_bytes / kMiB));
}

}  // namespace

int main() {
  const auto t0 = std::chrono::steady_clock::now();
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  print_header(prop);

  Bench b;
  b.pool.bytes = kCfg.pool_bytes;
  const int64_t alloc = kCfg.pool_bytes + 4096;  // + the last slot's guard, + offset 4 checks
  CK(cudaMalloc(&b.pool.src, static_cast<size_t>(alloc)));
  CK(cudaMalloc(&b.pool.dst, static_cast<size_t>(alloc)));
  CK(cudaMalloc(&b.bad, sizeof(*b.bad)));
  CK(cudaEventCreate(&b.start));
  CK(cudaEventCreate(&b.stop));
  fill<<<1024, 512>>>(reinterpret_cast<uint32_t*>(b.pool.src), alloc / 4);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());

  bandwidth_matrix(b, Mech::kReg, "kf::copy, 16-byte ld/st, grid-stride loop, 512 threads/block");
  bandwidth_matrix(b, Mech::kTma,
                   "kf::tma_load to shared memory + kf::tma_store, one thread per block, "
                   "2 x 16 KiB tiles");
  ce_table(b);
  odd_checks(b);
  latency_table(b, prop.multiProcessorCount);
  barriers(b);

  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (b.failures)
    std::printf("\nFAIL: %d checks failed (%.1f s)\n", b.failures, s);
  else
    std::printf("\nall checks ok (%.1f s)\n", s);
  CK(cudaFree(b.pool.src));
  CK(cudaFree(b.pool.dst));
  CK(cudaFree(b.bad));
  return b.failures ? 1 : 0;
}
