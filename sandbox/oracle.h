// sandbox/oracle.h: a problem's oracle (kf/oracle.h) as kforge sees it: built from the
// problem's folder into a cached library (build_oracle, in build.h), loaded by kforge-rank
// and by the tests, and called through the library's C entry point.
#pragma once

#include <string>

#include "kf/oracle.h"

namespace sandbox {

// Where the oracle's library is in a launch: the launch's library folder holds the
// candidate's, the baseline's and the oracle's (evaluate.cpp), so it is found beside the
// candidate's.
std::string oracle_lib_beside(const std::string& candidate_lib);

// A loaded oracle library. Not copyable: it owns the dlopen handle.
class Oracle {
 public:
  Oracle() = default;
  ~Oracle();
  Oracle(const Oracle&) = delete;
  Oracle& operator=(const Oracle&) = delete;

  // dlopen()s `lib_path` and finds its entry point; false with *err naming the file.
  bool open(const std::string& lib_path, std::string* err);
  bool loaded() const { return fn_ != nullptr; }
  // Runs the oracle on `io`; false with *err when it refuses the inputs, asks for a
  // tensor the job lacks, or throws. `io`'s callbacks may throw std::exception.
  bool call(const OracleIO& io, std::string* err) const;

 private:
  void* handle_ = nullptr;
  kf_oracle_fn fn_ = nullptr;
  std::string path_;
};

}  // namespace sandbox
