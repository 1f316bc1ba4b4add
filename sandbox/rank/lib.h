// sandbox/rank/lib.h: loading a candidate or baseline library.
#pragma once

#include <string>

#include "job_enums.h"
#include "kf/abi.h"

namespace sandbox::rank {

using EntryFn = int (*)(kf::Comm&, kf::Tensors&);

struct Lib {
  Role who = Role::candidate;
  std::string path;
  void* handle = nullptr;
  EntryFn setup = nullptr;  // optional
  EntryFn run = nullptr;    // required
  // Loaded in the runner, not here (the candidate: rank/runner_link.h): handle, setup
  // and run stay null.
  bool remote = false;
};

// dlopen(RTLD_NOW | RTLD_LOCAL) and look up kf_run (required) and kf_setup (optional);
// on failure *err carries dlerror()'s text.
bool load_lib(Role who, const std::string& path, Lib* out, std::string* err);

}  // namespace sandbox::rank
