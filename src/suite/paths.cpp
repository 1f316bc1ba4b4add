// src/suite/paths.cpp
#include "suite/paths.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "kf_build_paths.h"

namespace suite {

namespace fs = std::filesystem;

namespace {
std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

std::string self_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}
}  // namespace

bool file_exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

Paths default_paths() {
  Paths p;
  p.source_root = env_or("KFORGE_ROOT", KF_SOURCE_ROOT);
  p.problems_dir = env_or("KFORGE_PROBLEMS", p.source_root + "/problems");
  p.include_dir = p.source_root + "/primitives/include";
  std::string beside = self_dir() + "/kforge-rank";
  p.rank_binary = file_exists(beside) ? beside : std::string(KF_BINARY_DIR) + "/kforge-rank";
  p.runs_dir = env_or("KFORGE_RUNS", p.source_root + "/runs");
  std::string xdg = env_or("XDG_CACHE_HOME", env_or("HOME", "/tmp") + "/.cache");
  p.cache_dir = env_or("KFORGE_CACHE", xdg + "/kforge");
  return p;
}

sandbox::Backend detect_backend() {
  const std::string forced = env_or("KFORGE_BACKEND", "");
  sandbox::Backend b = sandbox::Backend::cuda;
  if (!forced.empty() && sandbox::parse_enum(forced, &b)) return b;
  if (!forced.empty())
    std::fprintf(stderr, "kforge: KFORGE_BACKEND=%s is neither cuda nor host; ignored\n",
                 forced.c_str());
  return file_exists("/dev/nvidia0") || file_exists("/dev/nvidiactl") ? sandbox::Backend::cuda
                                                                      : sandbox::Backend::host;
}

}  // namespace suite
