#include "build.h"

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "job.h"
#include "kf_build_paths.h"
#include "process.h"
#include "symbols.h"

using namespace sandbox;
namespace fs = std::filesystem;

namespace {

std::string temp_dir() {
  char tmpl[] = "/tmp/kf-build-test-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return tmpl;
}

std::string write(const std::string& dir, const std::string& name, const std::string& text) {
  std::string p = dir + "/" + name;
  std::ofstream(p) << text;
  return p;
}

Toolchain host_tc(const std::string& dir) {
  Toolchain tc;
  tc.backend = Backend::host;
  tc.include_dir = KF_SOURCE_ROOT "/primitives/include";
  tc.cache_dir = dir + "/cache";
  tc.allow_multicast = false;
  return tc;
}

const char* kHostOk = R"(#include <kf/kf.h>
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  float* y = t["y"].ptr<float>();
  y[0] = 1.0f;
  return 0;
}
)";

}  // namespace

TEST_CASE("build: a host candidate builds, then hits the cache; a change makes a new key") {
  std::string dir = temp_dir();
  Toolchain tc = host_tc(dir);
  std::string src = write(dir, "host.cpp", kHostOk);
  BuildResult b;
  std::string err;
  REQUIRE(build_library(tc, src, Role::candidate, &b, &err));
  INFO(b.log, err);
  REQUIRE(b.ok);
  CHECK(!b.cached);
  CHECK(fs::exists(b.lib_path));
  CHECK(b.lib_path == tc.cache_dir + "/" + b.key + "/lib.so");
  CHECK(b.key.size() == 64);

  BuildResult again;
  REQUIRE(build_library(tc, src, Role::candidate, &again, &err));
  CHECK(again.ok);
  CHECK(again.cached);
  CHECK(again.key == b.key);

  // The role is part of the key.
  BuildResult as_base;
  REQUIRE(build_library(tc, src, Role::baseline, &as_base, &err));
  CHECK(as_base.key != b.key);

  write(dir, "host.cpp", std::string(kHostOk) + "// changed\n");
  BuildResult changed;
  REQUIRE(build_library(tc, src, Role::candidate, &changed, &err));
  CHECK(changed.ok);
  CHECK(!changed.cached);
  CHECK(changed.key != b.key);
  // No temporary files are left in the key's directory.
  for (auto& e : fs::directory_iterator(tc.cache_dir + "/" + changed.key)) {
    std::string n = e.path().filename().string();
    CHECK((n == "lib.so" || n == "source.cpp" || n == "symbols.json"));
  }
  fs::remove_all(dir);
}

TEST_CASE("build: a cached library's symbols are read from the cache, not the library again") {
  std::string dir = temp_dir();
  Toolchain tc = host_tc(dir);
  std::string src = write(dir, "host.cpp", kHostOk);
  BuildResult b;
  std::string err;
  REQUIRE(build_library(tc, src, Role::candidate, &b, &err));
  REQUIRE(b.ok);
  const std::string kept = tc.cache_dir + "/" + b.key + "/symbols.json";
  REQUIRE(fs::exists(kept));
  // What the first build kept is what the next one checks: made to say the library
  // imports system(), the cached build is rejected for it.
  nlohmann::json j;
  REQUIRE(read_json_file(kept, &j, &err));
  j["undefined"].push_back("system");
  REQUIRE(write_json_file(kept, j, &err));
  BuildResult again;
  REQUIRE(build_library(tc, src, Role::candidate, &again, &err));
  CHECK(again.cached);
  CHECK_FALSE(again.ok);
  CHECK(again.stage == "symbols");
  // A file that does not read as a report is read from the library again.
  std::ofstream(kept) << "not json";
  BuildResult third;
  REQUIRE(build_library(tc, src, Role::candidate, &third, &err));
  CHECK(third.ok);
  fs::remove_all(dir);
}

TEST_CASE("build: the static check rejects before compiling") {
  std::string dir = temp_dir();
  std::string src = write(dir, "bad.cpp", std::string(kHostOk) + "void g() { MPI_Barrier(0); }\n");
  BuildResult b;
  std::string err;
  REQUIRE(build_library(host_tc(dir), src, Role::candidate, &b, &err));
  CHECK(!b.ok);
  CHECK(b.stage == "static");
  CHECK(b.status == Status::rejected);
  REQUIRE(!b.findings.empty());
  CHECK(b.findings[0].render().rfind("bad.cpp:7: uses MPI_Barrier", 0) == 0);
  CHECK(b.summary().rfind("rejected: bad.cpp:7:", 0) == 0);
  CHECK(!fs::exists(host_tc(dir).cache_dir));
  fs::remove_all(dir);
}

TEST_CASE("build: a compile error is trimmed and names the candidate's file") {
  std::string dir = temp_dir();
  std::string body = std::string(kHostOk) + "int g() { return undeclared_thing; }\n";
  for (int i = 0; i < 80; ++i)
    body += "int h" + std::to_string(i) + "() { return nope" + std::to_string(i) + "; }\n";
  std::string src = write(dir, "broken.cpp", body);
  BuildResult b;
  std::string err;
  REQUIRE(build_library(host_tc(dir), src, Role::candidate, &b, &err));
  CHECK(!b.ok);
  CHECK(b.stage == "compile");
  CHECK(b.status == Status::compile_error);
  CHECK(b.log.find("broken.cpp:7") != std::string::npos);
  CHECK(b.log.find("undeclared_thing") != std::string::npos);
  CHECK(b.log.find(dir + "/cache") == std::string::npos);  // no temporary path
  CHECK(b.log.find("more lines cut") != std::string::npos);
  CHECK(b.summary().find("broken.cpp:7") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("build: the compile time limit is a compile_error naming it") {
  std::string dir = temp_dir();
  Toolchain tc = host_tc(dir);
  // A "compiler" that never finishes.
  std::string slow = write(dir, "slowcc", "#!/bin/sh\nsleep 100\n");
  fs::permissions(slow, fs::perms::owner_all);
  tc.cxx = slow;
  tc.limit_s = 0.5;
  std::string src = write(dir, "host.cpp", kHostOk);
  BuildResult b;
  std::string err;
  REQUIRE(build_library(tc, src, Role::candidate, &b, &err));
  CHECK(b.status == Status::compile_error);
  CHECK(b.log.find("slowcc took longer than 0.5 s") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("build: a library without kf_run is a load_error") {
  std::string dir = temp_dir();
  // kf_run appears (so the static check passes) but is not exported.
  std::string src = write(dir, "noentry.cpp",
                          "#include <kf/kf.h>\nstatic int kf_run_impl() { return 0; }\n"
                          "namespace x { int kf_run() { return kf_run_impl(); } }\n");
  BuildResult b;
  std::string err;
  REQUIRE(build_library(host_tc(dir), src, Role::candidate, &b, &err));
  CHECK(!b.ok);
  CHECK(b.status == Status::load_error);
  CHECK(b.log.find("defines no kf_run") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("build: a tiny CUDA candidate builds with nvcc" * doctest::timeout(300)) {
  Toolchain tc;
  tc.backend = Backend::cuda;
  if (!fs::exists(tc.nvcc)) {
    MESSAGE("skipped: no nvcc at " << tc.nvcc);
    return;
  }
  std::string dir = temp_dir();
  tc.include_dir = KF_SOURCE_ROOT "/primitives/include";
  tc.cache_dir = dir + "/cache";
  std::string src = write(dir, "kernel.cu", R"(#include <kf/kf.cuh>
__global__ void fill(float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 1.0f;
}
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  kf::Tensor& y = t["y"];
  fill<<<(y.numel + 255) / 256, 256, 0, comm.stream()>>>(y.ptr<float>(), y.numel);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
)");
  BuildResult b;
  std::string err;
  REQUIRE(build_library(tc, src, Role::candidate, &b, &err));
  INFO(b.log);
  CHECK(b.ok);
  CHECK(b.command.find("-arch=sm_90") != std::string::npos);
  SymbolReport syms;
  REQUIRE(read_symbols(b.lib_path, &syms, &err));
  bool cudart = false;
  for (auto& n : syms.needed) cudart = cudart || n.rfind("libcudart.so", 0) == 0;
  CHECK(cudart);
  fs::remove_all(dir);
}

TEST_CASE("build: flags follow the backend, the role and sm_90a markers") {
  Toolchain tc;
  tc.backend = Backend::cuda;
  tc.include_dir = "/inc";
  tc.nccl_include = "/nccl/include";
  tc.nccl_lib_dir = "/nccl/lib";
  auto has = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  auto c = compile_flags(tc, "int kf_run;", Role::candidate);
  CHECK(has(c, "-arch=sm_90"));
  // The host pass at -O2 and no device link: nvcc's time, not the device code (issue 34).
  CHECK(has(c, "-O2"));
  CHECK(!has(c, "-O3"));
  CHECK(has(c, "-I/inc"));
  CHECK(!has(c, "-lnccl"));
  // /nccl/lib has no libnccl.so (the -dev symlink): link the runtime's soname.
  auto b = compile_flags(tc, "int kf_run;", Role::baseline);
  CHECK(has(b, "-l:libnccl.so.2"));
  CHECK(has(b, "-rpath=/nccl/lib"));
  {
    std::string dir = std::filesystem::temp_directory_path() / "kf-nccl-XXXXXX";
    REQUIRE(mkdtemp(dir.data()) != nullptr);
    std::ofstream(dir + "/libnccl.so") << "";
    Toolchain dev = tc;
    dev.nccl_lib_dir = dir;
    CHECK(has(compile_flags(dev, "int kf_run;", Role::baseline), "-lnccl"));
    std::filesystem::remove_all(dir);
  }
  CHECK(has(b, "-I/nccl/include"));
  auto a = compile_flags(tc, "// kf: sm_90a\nint kf_run;", Role::candidate);
  CHECK(has(a, "-gencode=arch=compute_90a,code=sm_90a"));
  CHECK(!has(a, "-arch=sm_90"));
  CHECK(has(compile_flags(tc, "asm(\"wgmma.mma_async\");", Role::candidate),
            "-gencode=arch=compute_90a,code=sm_90a"));
  tc.backend = Backend::host;
  auto h = compile_flags(tc, "", Role::candidate);
  CHECK(has(h, "-std=c++20"));
  CHECK(has(h, "-fPIC"));
}

TEST_CASE("build: a source that never mentions kf_run is a load_error without compiling") {
  std::string dir = temp_dir();
  std::string src = write(
      dir, "nokf.cpp",
      "#include <kf/kf.h>\nextern \"C\" int kf_setup(kf::Comm&, kf::Tensors&) { return 0; }\n");
  BuildResult b;
  std::string err;
  REQUIRE(build_library(host_tc(dir), src, Role::candidate, &b, &err));
  CHECK(b.status == Status::load_error);
  CHECK(b.stage == "static");
  CHECK(b.log.find("nokf.cpp defines no kf_run") != std::string::npos);
  fs::remove_all(dir);
}
