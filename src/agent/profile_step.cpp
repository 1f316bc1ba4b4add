// agent/profile_step.cpp: see profile_step.h.
#include "agent/profile_step.h"

#include <fmt/core.h>

#include <fstream>
#include <sstream>

#include "eval/profile.h"
#include "eval/profile_text.h"

namespace agent {

namespace {

// A crash the sanitizer can place: the device reported a bad address.
bool bad_address(const sandbox::Verdict& v) {
  std::string text = v.log;
  for (const auto& f : v.failures) text += "\n" + f.message;
  for (const auto& c : v.crashes) text += "\n" + c.what;
  for (const char* s : {"illegal memory access", "illegal address", "misaligned address",
                        "out of bounds", "cudaErrorIllegalAddress"})
    if (text.find(s) != std::string::npos) return true;
  return false;
}

// A mismatch that differs between the calls of one check: two failures of the same
// rank and tensor with different counts of bad elements.
bool differs_between_calls(const sandbox::Verdict& v) {
  for (size_t i = 0; i < v.failures.size(); ++i)
    for (size_t j = i + 1; j < v.failures.size(); ++j) {
      const auto &a = v.failures[i], &b = v.failures[j];
      int ra = i < v.failure_ranks.size() ? v.failure_ranks[i] : -1;
      int rb = j < v.failure_ranks.size() ? v.failure_ranks[j] : -1;
      if (ra == rb && a.tensor == b.tensor && a.bad_count != b.bad_count) return true;
    }
  return false;
}

}  // namespace

bool profile_wanted(ProfileMode mode, const sandbox::Verdict& v, const std::string& source,
                    eval::Tool* tool) {
  using sandbox::Status;
  if (mode == ProfileMode::never) return false;
  const bool always = mode == ProfileMode::always;
  if (v.status == Status::correct) return (*tool = eval::Tool::ncu, true);
  if (v.status == Status::crash && (always || bad_address(v)))
    return (*tool = eval::Tool::memcheck, true);
  // racecheck sees shared-memory races: worth a rerun for a kernel that has shared memory.
  const bool shared = source.find("__shared__") != std::string::npos;
  if (v.status == Status::unstable ||
      (v.status == Status::mismatch && (always || shared || differs_between_calls(v))))
    return (*tool = eval::Tool::racecheck, true);
  return false;
}

bool profile_step(const eval::EvalConfig& cfg, ProfileMode mode, int turn, const std::string& file,
                  const sandbox::Verdict& v, ProfileStep* out, std::string* err) {
  *out = ProfileStep{};
  eval::ProfileOptions opt;
  std::ifstream in(file);
  std::stringstream source;
  source << in.rdbuf();
  if (!profile_wanted(mode, v, source.str(), &opt.tool)) return true;
  out->ran = true;
  eval::ProfileReport r;
  r.tool = opt.tool;
  if (opt.tool == eval::Tool::ncu && v.emulated) {
    // Seen on the H200: ncu measures one kernel at a time, and a rank's kernel that waits
    // for a peer's on the same GPU never finishes (kf::wait's deadline ends it).
    r.note =
        "the ranks share one GPU, where Nsight Compute, measuring one kernel at a time, stops "
        "a kernel that waits on a peer's (run with a GPU per rank, or --world 1)";
  } else if (!eval::profile_file(cfg, file, sandbox::Role::candidate, opt, &r, err)) {
    return false;
  }
  std::vector<std::string> lines = eval::feedback_lines(r, 8);
  std::string why = opt.tool == eval::Tool::ncu
                        ? "correct but slower than the goal"
                        : "a " + std::string(sandbox::status_name(v.status));
  if (r.status == eval::ProfileStatus::ran) {
    out->feedback =
        fmt::format("\nProfile of this candidate ({}, {}):\n", sandbox::enum_name(opt.tool), why);
    for (const std::string& l : lines) out->feedback += "- " + l + "\n";
  }
  out->event = {{"turn", turn},
                {"tool", opt.tool},
                {"why", why},
                {"status", r.status},
                {"note", r.note},
                {"seconds", r.seconds},
                {"dir", r.dir},
                {"lines", lines},
                {"verdict_under_tool", r.verdict.summary},
                {"report", eval::profile_json(r, false)}};
  return true;
}

}  // namespace agent
