// sandbox/rank/build_gate.cpp
#include "build_gate.h"

#include <chrono>
#include <thread>

#include "serve.h"
#include "status.h"

namespace sandbox::rank {

bool wait_for_build(const Job& job) {
  if (job.build_gate.empty()) return true;
  status_set(RankPhase::build, "waiting for the libraries", false, job.settings.limits.build_s);
  // The gate is written whole under another name and renamed (write_json_file), so a
  // file that exists reads complete.
  for (;;) {
    nlohmann::json gate;
    std::string err;
    if (read_json_file(job.build_gate, &gate, &err)) return gate.value("ok", false);
    if (kforge_gone()) return false;  // a warm rank's kforge will write no gate now
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace sandbox::rank
