// sandbox/oracle_build.cpp: a problem's oracle.cpp into a cached library (kforge's side;
// kforge-rank only loads it, sandbox/oracle.cpp).
#include <filesystem>

#include "build.h"

namespace fs = std::filesystem;

namespace sandbox {

std::string oracle_source(const std::string& problem_dir) {
  return problem_dir + "/oracle.cpp";
}

bool build_oracle(const Toolchain& tc, const std::string& problem_dir, BuildResult* out,
                  std::string* err) {
  const std::string src = oracle_source(problem_dir);
  if (!fs::exists(src)) {
    *err = src +
           ": no such file: every problem needs an oracle.cpp that defines KF_ORACLE(<name>)"
           " (kf/oracle.h); `kforge new-problem NAME --from EXISTING` starts from a copy";
    return false;
  }
  if (!build_library(tc, src, Role::candidate, out, err, LibraryKind::oracle)) {
    *err = "the oracle " + src + ": " + *err;
    return false;
  }
  if (out->ok) return true;
  *err = "the oracle " + src + " does not build: " + out->summary() +
         (out->log.empty() ? "" : "\n" + out->log) +
         "\nfix the file (g++ -std=c++20 against primitives/include/kf/oracle.h; it must define"
         " KF_ORACLE(<name>)) and run again: kforge builds it on first use and needs no rebuild";
  return false;
}

}  // namespace sandbox
