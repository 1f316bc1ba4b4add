// tests/oracle_fake.h: an oracle's view of the ranks (sandbox::OracleIO) over plain maps,
// for the problems' oracle tests: every rank's inputs and shapes by name, and this rank's
// expected outputs, which a test sizes (and may poison) before running the oracle. The
// oracle itself is built from problems/<name>/oracle.cpp and loaded as kforge-rank loads
// it (sandbox/oracle.h), once per test process.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "build.h"
#include "kf_build_paths.h"
#include "oracle.h"

// The oracle of problems/<problem>, built into a cache of this test process (its first
// call compiles with g++; later ones reuse it). Not loaded, with *err, when it does not build.
inline const sandbox::Oracle& problem_oracle(const std::string& problem,
                                             std::string* err = nullptr) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<sandbox::Oracle>> loaded;
  // The cache lives as long as the test process: removed at exit (a loaded library's
  // file may go while it is mapped).
  static const struct Cache {
    std::string dir = (std::filesystem::temp_directory_path() / "kf-oracle-test-XXXXXX").string();
    Cache() {
      if (!mkdtemp(dir.data())) dir.clear();
    }
    ~Cache() {
      std::error_code ec;
      if (!dir.empty()) std::filesystem::remove_all(dir, ec);
    }
  } cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = loaded[problem];
  if (slot) return *slot;
  slot = std::make_unique<sandbox::Oracle>();
  sandbox::Toolchain tc;
  tc.backend = sandbox::Backend::host;
  tc.include_dir = std::string(KF_SOURCE_ROOT) + "/primitives/include";
  tc.cache_dir = cache.dir;
  sandbox::BuildResult b;
  std::string e;
  if (sandbox::build_oracle(tc, std::string(KF_SOURCE_ROOT) + "/problems/" + problem, &b, &e))
    slot->open(b.lib_path, &e);
  if (err) *err = e;
  return *slot;
}

struct OracleFake {
  std::map<std::string, std::vector<std::vector<double>>> in;
  std::map<std::string, std::vector<std::vector<int64_t>>> shapes;
  std::map<std::string, std::vector<double>> outs;
  sandbox::OracleIO io;

  OracleFake(int world, int rank) {
    io.world = world;
    io.rank = rank;
    io.input = [this](const std::string& name, int r) -> const std::vector<double>& {
      return in.at(name).at(static_cast<size_t>(r));
    };
    io.shape = [this](const std::string& name, int r) -> const std::vector<int64_t>& {
      return shapes.at(name).at(static_cast<size_t>(r));
    };
    io.out = [this](const std::string& name) -> std::vector<double>& { return outs.at(name); };
  }
  // The lambdas hold `this`: a copy would read the original's maps.
  OracleFake(const OracleFake&) = delete;
  OracleFake& operator=(const OracleFake&) = delete;

  // Runs problems/<problem>'s oracle on this fake; false with *err as kforge-rank gets it.
  bool run_oracle(const std::string& problem, std::string* err) {
    const sandbox::Oracle& o = problem_oracle(problem, err);
    return o.loaded() && o.call(io, err);
  }
};
