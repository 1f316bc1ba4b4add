// sandbox/static_check.h: the checks on a candidate's source before it is compiled
// (DESIGN.md "The sandbox", step 1). They catch what a model writes by habit or by
// mistake (MPI, NCCL, a private stream, system()); the symbol check after the build
// (symbols.h) catches what slips through macros or pointers.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "job_enums.h"

namespace sandbox {

// Whose source it is: only a problem's baseline may use NCCL.

// One reason to reject a source (or a library, from symbols.h).
struct Finding {
  std::string rule;     // "size", "nccl", "mpi", "multicast", "escape", "timing",
                        // "include", "entry", "symbol", "needed"
  std::string file;     // the name the author knows it by, e.g. "kernel.cu"
  int line = 0;         // 1-based; 0 for the whole file
  std::string what;     // "uses MPI_Allreduce"
  std::string why;      // "candidates may not call MPI"
  std::string instead;  // "synchronize through comm.signals and peer memory instead"
  // "kernel.cu:12: uses MPI_Allreduce: candidates may not call MPI; synchronize ... instead"
  std::string render() const;
};

struct StaticPolicy {
  size_t max_bytes = 512 * 1024;
  bool allow_multicast = false;  // see default_static_policy
  std::string file_name = "kernel.cu";
};

// The policy of this machine: multicast is allowed only when NCCL_NVLS_ENABLE is set
// and not 0 (NVLink multicast is off on the machines this project is tested on).
StaticPolicy default_static_policy();
bool multicast_allowed_by_env();

// True when the source passes; otherwise false with every finding (in line order).
bool static_check(const std::string& source, Role role, const StaticPolicy& policy,
                  std::vector<Finding>* findings);

// The source with comments and string/char literals replaced by spaces; newlines are
// kept so that line numbers stay right. With keep_strings, only comments go.
std::string strip_comments_and_strings(const std::string& source, bool keep_strings = false);

}  // namespace sandbox
