// The primitives library (primitives/include/kf/) and the expert kernels built on it.
// Host logic (the partition helpers every kernel relies on) is tested directly; the
// CUDA headers and every problems/*/solution*.cu are compiled with nvcc for sm_90 (and
// sm_90a for the arch-specific parts). No GPU is needed; running them is for the GPU
// machine.
#include <doctest/doctest.h>
#include <kf/partition.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kf_build_paths.h"
#include "tests/two_at_a_time.h"

namespace fs = std::filesystem;

namespace {

std::string nvcc_path() {
  if (const char* e = std::getenv("KF_NVCC")) return e;
#ifdef KF_NVCC
  return KF_NVCC;  // the toolkit CMake found
#endif
  if (fs::exists("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
  return "nvcc";
}

struct NvccRun {
  int status;
  std::string output;
};

// Runs a shell command, returning its exit status and its merged stdout/stderr.
NvccRun run(const std::string& cmd) {
  NvccRun r{-1, {}};
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t got;
  while ((got = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), got);
  r.status = pclose(p);
  return r;
}

fs::path scratch_dir() {
  fs::path d = fs::temp_directory_path() / ("kf_primitives_test." + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

// Compiles `src` into a shared library the way the sandbox builds candidates, with host
// warnings on. Returns nvcc's output; the test asserts success and no warning.
NvccRun compile(const fs::path& src, const std::string& arch, const std::string& extra = "") {
  const fs::path root = KF_SOURCE_ROOT;
  const fs::path out =
      scratch_dir() /
      (src.stem().string() + "_" +
       std::to_string(std::hash<std::string>{}(src.string() + arch + extra)) + ".so");
  std::ostringstream cmd;
  cmd << nvcc_path() << " -O3 -std=c++17 " << arch << " -shared -Xcompiler -fPIC,-Wall,-Wextra"
      << " -cudart shared -I " << (root / "primitives/include") << " " << extra << " -o " << out
      << " " << src;
  NvccRun r = run(cmd.str());
  fs::remove(out);
  return r;
}

bool has_warning(const std::string& s) {
  return s.find("warning") != std::string::npos || s.find("Warning") != std::string::npos;
}

// Every template and wrapper of the library, instantiated once.
const char* kInstantiate = R"CU(
#include <kf/kf.cuh>

template <class T>
__global__ void use_loops(kf::Peers<T> d, kf::Peers<const T> s, int w, int64_t n, bool v) {
  kf::copy(d[0], s[0], n, kf::grid_tid(), kf::grid_threads());
  kf::copy_push(d, w, 0, s[0], n, v, kf::grid_tid(), kf::grid_threads());
  kf::reduce(d[0], s, w, 0, n, v, kf::grid_tid(), kf::grid_threads());
  kf::reduce_push(d, w, n, s, w, n, n, v, kf::grid_tid(), kf::grid_threads());
}
template __global__ void use_loops<float>(kf::Peers<float>, kf::Peers<const float>, int, int64_t, bool);
template __global__ void use_loops<__nv_bfloat16>(kf::Peers<__nv_bfloat16>, kf::Peers<const __nv_bfloat16>, int, int64_t, bool);

__global__ void use_signals(const __grid_constant__ kf::SignalSet s, uint32_t e, uint32_t* f) {
  if (threadIdx.x == 0) {
    kf::signal(s, 0, 1, e);
    kf::signal_all(s, 2, e);
    kf::wait(s, 0, 1, e);
    kf::wait_all(s, 2, e);
    kf::red_add_release_sys(f, 1);
    (void)kf::ld_relaxed_sys(f);
    kf::wait_flag(f, e, s.rank, 0, 0);
  }
  kf::barrier(s, 3, e);
}

__global__ void use_tma(float* g, float4* mc, uint4* mcb, uint32_t* mcs) {
  __shared__ alignas(128) float buf[256];
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) {
    kf::mbar_init(&bar, 1);
    kf::mbar_arrive_expect_tx(&bar, sizeof(buf));
    kf::tma_load(buf, g, sizeof(buf), &bar);
    kf::mbar_wait(&bar, 0);
    kf::fence_proxy_async_smem();
    kf::tma_store(g + 256, buf, sizeof(buf));
    kf::tma_store_add(g + 512, buf, sizeof(buf));
    kf::tma_commit();
    kf::tma_wait_read<0>();
    kf::tma_flush_for_peers();
    kf::mbar_arrive(&bar);
  }
  if (mc) {  // multimem: compiled, never executed here (no multicast object exists)
    kf::multimem_st(mc + 1, kf::multimem_ld_reduce_add(mc));
    kf::multimem_red_add(mc + 2, make_float4(1, 1, 1, 1));
    kf::multimem_st_bf16x8(mcb + 1, kf::multimem_ld_reduce_add_bf16x8(mcb));
    kf::multimem_red_add_bf16x8(mcb + 2, make_uint4(0, 0, 0, 0));
    kf::multimem_signal_add(mcs, 1);
  }
}

using Roles = kf::WarpRoles<8, 1>;
__global__ void __launch_bounds__(Roles::kThreads, 1) use_schedule(kf::Sym<float> x, kf::BlockSplit split, uint32_t* flags, uint32_t e) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if (Roles::is_comm()) kf::reg_dealloc<40>(); else kf::reg_alloc<232>();
#endif
  if (split.is_comm()) {
    kf::wait_tile(flags + split.comm_index(), e, x.rank, split.comm_index());
    return;
  }
  if (!Roles::is_comm()) kf::named_sync(1, Roles::kComputeThreads);
  kf::Tile2<float> t = kf::tile(x.at(x.rank), 64, 0, 0, 16, 16);
  if (t.vec16() && kf::lane_id() == 0 && Roles::comm_warp() < 0) t(0, 0) = *x.chunk(0, 1, 16);
  kf::tile_ready(flags + blockIdx.x, e);
}

// Two k pieces from different places into one edge tile (61 x 120 of a 64 x 128 tile).
using Gemm = kf::TileGemm<64, 128, 32, 2, 2, 3>;
__global__ void __launch_bounds__(Gemm::kThreads) use_gemm(const __nv_bfloat16* a, const __nv_bfloat16* b,
                                                           __nv_bfloat16* c) {
  extern __shared__ __align__(128) char smem[];
  Gemm tile;
  tile.zero();
  tile.mma(smem, a, 64, b, 128, 61, 120, 40);
  tile.mma(smem, a + 40, 64, b + 40 * 128, 128, 61, 120, 24);
  const float* cs = tile.stage_f32(smem);
  kf::store_tile_bf16(c, 128, cs, Gemm::kLdC, 61, 120);
}

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  kf::SignalSet s = kf::make_signals(comm, 4);
  (void)kf::max_coresident_blocks(use_gemm, Gemm::kThreads, Gemm::kSmemBytes);
  kf::Sym<float> x = kf::sym<float>(comm, t["x"]);
  (void)kf::max_coresident_blocks(use_schedule, Roles::kThreads, 0);
  (void)kf::multicast_allowed(comm.device);
  if (kf::launch_barrier(s, 0, kf::next_epoch(), comm.stream()) != cudaSuccess) return 1;
  if (kf::ce_copy(x.at(0), x.local, 16, comm.stream()) != cudaSuccess) return 1;
  if (kf::ce_copy_chunked(x.at(0), x.local, 64, 16, comm.stream()) != cudaSuccess) return 1;
  use_schedule<<<2, Roles::kThreads, 0, comm.stream()>>>(x, kf::BlockSplit{1, 1}, s.local, 1);
  use_signals<<<1, 64, 0, comm.stream()>>>(s, 1, s.local);
  use_tma<<<1, 32, 0, comm.stream()>>>(x.local, nullptr, nullptr, nullptr);
  return 0;
}
extern "C" int kf_run(kf::Comm&, kf::Tensors&) { return 0; }
)CU";

}  // namespace

TEST_CASE("primitives: split covers [0, n) in order, with aligned part starts") {
  for (int64_t n : {0, 1, 3, 4099, 1048576, 1000003}) {
    for (int parts : {1, 2, 3, 4, 8, 64}) {
      for (int64_t align : {1, 4, 8}) {
        int64_t next = 0;
        for (int p = 0; p < parts; ++p) {
          const kf::Range r = kf::split(n, parts, p, align);
          CHECK(r.begin == next);
          CHECK(r.end >= r.begin);
          if (r.size() > 0 && r.begin < n) CHECK(r.begin % align == 0);
          next = r.end;
        }
        CHECK(next == n);
      }
    }
  }
  // Near-equal: no part larger than ceil(n/parts) rounded up to the alignment.
  CHECK(kf::split(4099, 4, 0, 4).size() == 1028);
  CHECK(kf::split(4099, 4, 3, 4).size() == 4099 - 3 * 1028);
  CHECK(kf::split(3, 8, 7, 1).size() == 0);
}

TEST_CASE("primitives: chunks and grid sizes") {
  CHECK(kf::num_chunks(0, 16) == 0);
  CHECK(kf::num_chunks(17, 16) == 2);
  CHECK(kf::chunk(17, 16, 1).begin == 16);
  CHECK(kf::chunk(17, 16, 1).size() == 1);
  CHECK(kf::chunk(17, 16, 5).size() == 0);
  CHECK(kf::grid_for(0, 512, 32) == 1);
  CHECK(kf::grid_for(1025, 512, 32) == 3);
  CHECK(kf::grid_for(int64_t(1) << 40, 512, 32) == 32);
  CHECK(kf::round_up(5, 4) == 8);
  CHECK(kf::ceil_div(8, 4) == 2);
}

TEST_CASE("primitives: 16-byte alignment helpers") {
  alignas(16) float buf[16] = {};
  CHECK(kf::aligned16(buf));
  CHECK_FALSE(kf::aligned16(buf + 1));
  CHECK(kf::head_elems(reinterpret_cast<uintptr_t>(buf), 4, 100) == 0);
  CHECK(kf::head_elems(reinterpret_cast<uintptr_t>(buf + 1), 4, 100) == 3);
  CHECK(kf::head_elems(reinterpret_cast<uintptr_t>(buf + 1), 4, 2) == 2);  // never aligns within n
  CHECK(kf::head_elems(reinterpret_cast<uintptr_t>(buf) + 2, 4, 100) == 100);  // elem misfit
  CHECK(kf::co_aligned16(buf + 1, buf + 5));
  CHECK_FALSE(kf::co_aligned16(buf + 1, buf + 2));
}

TEST_CASE("primitives: one-shot vs two-shot all-reduce follows vLLM's thresholds") {
  CHECK(kf::allreduce_one_shot(64u << 20, 2));
  CHECK(kf::allreduce_one_shot((512u << 10) - 1, 4));
  CHECK_FALSE(kf::allreduce_one_shot(512u << 10, 4));
  CHECK(kf::allreduce_one_shot((256u << 10) - 1, 8));
  CHECK_FALSE(kf::allreduce_one_shot(256u << 10, 8));
  CHECK_FALSE(kf::allreduce_one_shot(1024, 16));
}

TEST_CASE("primitives: headers never name the multicast driver API") {
  // The sandbox rejects candidates that mention it, and may scan included headers.
  for (const auto& e : fs::directory_iterator(fs::path(KF_SOURCE_ROOT) / "primitives/include/kf")) {
    std::ifstream in(e.path());
    std::stringstream ss;
    ss << in.rdbuf();
    CHECK_MESSAGE(ss.str().find("cuMulticast") == std::string::npos, e.path().string());
  }
}

TEST_CASE("primitives: every header and template compiles for sm_90 and sm_90a") {
  const fs::path src = scratch_dir() / "kf_instantiate.cu";
  {
    std::ofstream out(src);
    out << kInstantiate;
  }
  for (const std::string arch : {"-arch=sm_90", "-gencode=arch=compute_90a,code=sm_90a"}) {
    NvccRun r = compile(src, arch);
    INFO(arch << "\n" << r.output);
    CHECK(r.status == 0);
    CHECK_FALSE(has_warning(r.output));
  }
  NvccRun r = compile(src, "-arch=sm_90", "-DKF_WAIT_TIMEOUT_NS=0");  // deadline disabled
  INFO(r.output);
  CHECK(r.status == 0);
  fs::remove_all(scratch_dir());
}

TEST_CASE("primitives: every expert kernel (problems/*/solution*.cu) compiles without warnings") {
  std::vector<fs::path> sources;
  for (const auto& dir : fs::directory_iterator(fs::path(KF_SOURCE_ROOT) / "problems")) {
    if (!dir.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(dir.path())) {
      const std::string name = f.path().filename().string();
      if (name.rfind("solution", 0) == 0 && f.path().extension() == ".cu")
        sources.push_back(f.path());
    }
  }
  CHECK(sources.size() >= 5);  // one per collective at least
  std::vector<NvccRun> runs(sources.size());
  kf_test::two_at_a_time(sources.size(),
                         [&](size_t i) { runs[i] = compile(sources[i], "-arch=sm_90"); });
  for (size_t i = 0; i < sources.size(); ++i) {
    INFO(sources[i].string() << "\n" << runs[i].output);
    CHECK(runs[i].status == 0);
    CHECK_FALSE(has_warning(runs[i].output));
  }
  fs::remove_all(scratch_dir());
}
