// fault: all_reduce world=2 expect=timeout args=--call-limit,3 says=trial_0_call_0
// Hangs in its first call while a thread rewrites its rank's status file every 50 ms
// ("setup", a fresh window of 600 s), which would hold the watchdog off until the job's
// total limit. Only the judge can write the status file: the call limit (3 s) fires,
// and the verdict names the judge's phase (trial 0 call 0), not the forged one.
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors&) {
  const std::string path = "../status/rank" + std::to_string(comm.rank);
  std::thread([path] {
    for (;;) {
      long long now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
      if (FILE* f = std::fopen(path.c_str(), "w")) {
        std::fprintf(f,
                     "{\"pid\":1,\"phase\":\"setup\",\"detail\":\"forged\",\"in_candidate\":false,"
                     "\"since_ms\":%lld,\"limit_s\":600}\n",
                     now);
        std::fclose(f);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }).detach();
  for (volatile int spin = 1; spin;) {
  }
  return 0;
}
