// src/suite/paths.h: where kforge finds its parts (problems, headers, kforge-rank) and
// where it writes (runs, build cache), with the environment overrides a user expects.
#pragma once

#include <string>

#include "sandbox/job_enums.h"

namespace suite {

struct Paths {
  std::string source_root;   // the checkout: problems/, primitives/ (KFORGE_ROOT)
  std::string problems_dir;  // KFORGE_PROBLEMS or <root>/problems
  std::string include_dir;   // <root>/primitives/include
  std::string rank_binary;   // kforge-rank beside the kforge binary, else the build dir's
  std::string runs_dir;      // KFORGE_RUNS or <root>/runs
  std::string cache_dir;     // KFORGE_CACHE or $XDG_CACHE_HOME/kforge or ~/.cache/kforge
};

Paths default_paths();

// "cuda" when this machine has an NVIDIA GPU (a /dev/nvidia* device node), else "host";
// KFORGE_BACKEND overrides.
sandbox::Backend detect_backend();

bool file_exists(const std::string& path);

}  // namespace suite
