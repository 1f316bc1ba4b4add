#include "symbols.h"

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "process.h"

using namespace sandbox;
namespace fs = std::filesystem;

namespace {
std::string temp_dir() {
  char tmpl[] = "/tmp/kf-symbols-test-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return tmpl;
}
std::string write(const std::string& dir, const std::string& name, const std::string& text) {
  std::string p = dir + "/" + name;
  std::ofstream(p) << text;
  return p;
}
}  // namespace

TEST_CASE("symbols: banned imports and NEEDED libraries are found") {
  std::string dir = temp_dir();
  std::string src = write(
      dir, "sock.cpp",
      "#include <sys/socket.h>\n#include <cstdlib>\n"
      "extern \"C\" int kf_run() { return socket(AF_INET, SOCK_STREAM, 0) + system(\"true\"); }\n");
  ProcessSpec spec;
  spec.argv = {"g++", "-shared", "-fPIC", "-o", dir + "/sock.so", src, "-Wl,--no-as-needed", "-lz"};
  spec.env = {"PATH=/usr/bin:/bin"};
  ProcessResult r;
  std::string err;
  REQUIRE(run_process(spec, &r, &err));
  bool have_z = r.ok();
  if (!have_z) {
    spec.argv.pop_back();
    REQUIRE(run_process(spec, &r, &err));
    REQUIRE(r.ok());
  }
  SymbolReport syms;
  REQUIRE(read_symbols(dir + "/sock.so", &syms, &err));
  CHECK(defines_symbol(syms, "kf_run"));
  std::vector<Finding> f;
  CHECK(!check_symbols(syms, Role::candidate, "sock.cpp", &f));
  bool socket_found = false, system_found = false, z_found = false;
  for (auto& x : f) {
    socket_found = socket_found || x.what == "the library imports socket";
    system_found = system_found || x.what == "the library imports system";
    z_found = z_found || (x.rule == "needed" && x.what.find("libz") != std::string::npos);
  }
  CHECK(socket_found);
  CHECK(system_found);
  CHECK(z_found == have_z);
  CHECK(f[0].render().rfind("sock.cpp: the library imports", 0) == 0);
  fs::remove_all(dir);
}

TEST_CASE("symbols: a clean library passes, NCCL only for baselines") {
  SymbolReport s;
  s.undefined = {"cudaMalloc", "ncclAllReduce", "memcpy"};
  s.needed = {"libcudart.so.13", "libnccl.so.2", "libstdc++.so.6", "libc.so.6"};
  std::vector<Finding> f;
  CHECK(check_symbols(s, Role::baseline, "baseline.cu", &f));
  CHECK(f.empty());
  CHECK(!check_symbols(s, Role::candidate, "kernel.cu", &f));
  CHECK(f.size() == 2);  // the import and the library
}
