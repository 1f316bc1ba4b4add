// Prompts without answers: no prompt the loop can send carries the code of any problem's
// expert solution (solution*.cu, solution_host.cpp) or shipped example (examples/*), in
// either mode, on either backend. A solution's line counts when, with whitespace and //
// comments removed, it has 25+ characters and is not also in something the model may
// see (a baseline, the primitives' docs, the kf headers); four consecutive non-trivial
// lines of a solution count whatever they are.
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>

#include "agent/feedback.h"
#include "agent/prompt.h"
#include "agent/reply.h"
#include "agent/skeleton.h"
#include "agent/template.h"
#include "suite/paths.h"

namespace {

namespace fs = std::filesystem;

constexpr size_t kDistinctive = 25;  // characters of a line that alone would be a leak
constexpr size_t kTrivial = 8;       // shorter lines (braces, return 0;) never count
constexpr size_t kRun = 4;           // consecutive non-trivial lines that count

// A line without whitespace and without a // comment.
std::string squeeze(const std::string& line) {
  std::string s;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line.compare(i, 2, "//") == 0 && (i == 0 || line[i - 1] != ':')) break;  // not in https://
    if (!isspace(static_cast<unsigned char>(line[i]))) s += line[i];
  }
  return s;
}

std::vector<std::string> squeezed_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(squeeze(l));
  return out;
}

std::string read(const std::string& path) {
  std::string s, err;
  REQUIRE_MESSAGE(agent::read_text_file(path, &s, &err), err);
  return s;
}

struct Secret {
  std::string file;
  std::vector<std::string> distinctive;  // squeezed lines of kDistinctive+ not seen elsewhere
  std::vector<std::string> runs;         // kRun consecutive non-trivial lines, '\n'-joined,
                                         // not in a baseline
};

// What the model may read on some run, squeezed and run together: a solution's line
// found in it is no secret. `whole` (baselines, skeletons) is given to the model as
// a whole file; the rest (primitives' docs, kf headers) only documents the primitives,
// so a run of solution lines is a leak there.
struct Visible {
  std::string any, whole;
};

void add_text(const std::string& text, std::string* flat, std::string* runs) {
  for (auto& l : squeezed_lines(text)) {
    *flat += l + "\n";
    if (runs && l.size() >= kTrivial) *runs += l + "\n";
  }
}

Visible visible_text(const std::string& root, const std::vector<suite::Problem>& ps) {
  Visible v;
  for (auto& p : ps) {
    for (const char* b : {"/baseline.cu", "/baseline_host.cpp"})
      add_text(read(p.dir + b), &v.any, &v.whole);
    for (sandbox::Backend b : {sandbox::Backend::cuda, sandbox::Backend::host})
      add_text(agent::kernel_skeleton(p, b), &v.any, nullptr);
  }
  for (const char* d : {"/primitives/docs", "/primitives/include/kf"})
    for (auto& e : fs::directory_iterator(root + d))
      add_text(read(e.path().string()), &v.any, nullptr);
  return v;
}

std::vector<Secret> secrets(const std::string& root, const std::vector<suite::Problem>& ps) {
  const Visible visible = visible_text(root, ps);
  std::vector<Secret> out;
  for (auto& p : ps) {
    std::vector<std::string> files;
    for (auto& e : fs::directory_iterator(p.dir))
      if (e.path().filename().string().rfind("solution", 0) == 0)
        files.push_back(e.path().string());
    for (auto& e : fs::directory_iterator(p.dir + "/examples")) files.push_back(e.path().string());
    for (auto& f : files) {
      Secret s{f, {}, {}};
      std::vector<std::string> code;
      for (auto& l : squeezed_lines(read(f))) {
        if (l.size() >= kTrivial) code.push_back(l);
        if (l.size() >= kDistinctive && visible.any.find(l) == std::string::npos)
          s.distinctive.push_back(l);
      }
      for (size_t i = 0; i + kRun <= code.size(); ++i) {
        std::string run;
        for (size_t k = 0; k < kRun; ++k) run += code[i + k] + "\n";
        if (visible.whole.find(run) == std::string::npos) s.runs.push_back(run);
      }
      out.push_back(s);
    }
  }
  return out;
}

// What of a secret the prompt holds: "" when nothing.
std::string leak(const std::string& prompt, const Secret& s) {
  std::string flat, lines;
  for (auto& l : squeezed_lines(prompt)) {
    flat += l;
    if (l.size() >= kTrivial) lines += l + "\n";
  }
  for (auto& d : s.distinctive)
    if (flat.find(d) != std::string::npos) return s.file + ": the line " + d;
  for (auto& r : s.runs)
    if (lines.find(r) != std::string::npos) return s.file + ": the lines\n" + r;
  return "";
}

sandbox::Verdict verdict(const suite::Problem& p, const std::string& backend,
                         sandbox::Status status) {
  sandbox::Verdict v;
  v.status = status;
  v.problem = p.name;
  REQUIRE(sandbox::parse_enum(backend, &v.backend));
  v.world = 4;
  v.size = "small";
  v.summary = std::string(sandbox::status_name(status)) + " at world 4";
  v.log = "rank 1: CUDA error: an illegal memory access was encountered\n";
  if (status == sandbox::Status::crash) v.crashes = {{1, "signal 11 (SIGSEGV)"}};
  if (status == sandbox::Status::correct) v.timed = true, v.speedup = 0.8;
  return v;
}

// Every prompt one run of (problem, backend, mode) can send, by name.
std::vector<std::pair<std::string, std::string>> all_prompts(const suite::Problem& p,
                                                             const std::string& backend,
                                                             const std::string& mode) {
  agent::PromptInputs in;
  in.eval.paths = suite::default_paths();
  in.eval.problem = p;
  REQUIRE(sandbox::parse_enum(backend, &in.eval.settings.backend));
  in.eval.settings.world = 4;
  in.eval.machine = suite::default_h200();
  REQUIRE(sandbox::parse_enum(mode, &in.mode));
  in.prompts_dir = agent::default_prompts_dir();
  in.topology = suite::host_topology();
  in.baseline_time = "The baseline was not measured.";
  std::vector<std::pair<std::string, std::string>> out(2);
  std::string err;
  out[0].first = "system";
  REQUIRE_MESSAGE(agent::build_system_prompt(in, &out[0].second, &err), err);
  out[1].first = "task";
  REQUIRE_MESSAGE(agent::build_task_prompt(in, &out[1].second, &err), err);
  for (sandbox::Status st :
       {sandbox::Status::mismatch, sandbox::Status::crash, sandbox::Status::correct}) {
    std::string fb;
    REQUIRE_MESSAGE(
        agent::render_feedback(in.prompts_dir, verdict(p, backend, st), 2, 1.5, &fb, &err), err);
    out.push_back({std::string("feedback ") + sandbox::status_name(st), fb});
  }
  agent::ParsedReply bad = mode == "agent"
                               ? agent::parse_agent_reply("no block", in.eval.settings.backend)
                               : agent::parse_direct_reply("no block", in.eval.settings.backend);
  std::string fe;
  REQUIRE_MESSAGE(agent::render_format_error(in.prompts_dir, bad.error, 2, &fe, &err), err);
  out.push_back({"format error", fe});
  return out;
}

}  // namespace

TEST_CASE(
    "prompt leak: no prompt of any problem, backend or mode carries a solution's or an example's "
    "code") {
  const suite::Paths paths = suite::default_paths();
  std::vector<suite::Problem> ps;
  std::string err;
  REQUIRE_MESSAGE(suite::load_all_problems(paths.problems_dir, &ps, &err), err);
  REQUIRE(ps.size() >= 5);
  const std::vector<Secret> all = secrets(paths.source_root, ps);
  size_t lines = 0;
  for (auto& s : all) lines += s.distinctive.size();
  REQUIRE(lines > 100);  // the check has something to find
  for (auto& p : ps)
    for (std::string backend : {"cuda", "host"})
      for (std::string mode : {"direct", "agent"})
        for (auto& [name, text] : all_prompts(p, backend, mode))
          for (auto& s : all) {
            std::string what = leak(text, s);
            CHECK_MESSAGE(what.empty(), p.name << " " << backend << " " << mode << ", " << name
                                               << " prompt carries " << what);
          }
}

TEST_CASE("prompt leak: the check finds a pasted solution, reflowed or as a fragment") {
  const suite::Paths paths = suite::default_paths();
  std::vector<suite::Problem> ps;
  std::string err;
  REQUIRE_MESSAGE(suite::load_all_problems(paths.problems_dir, &ps, &err), err);
  std::vector<Secret> all = secrets(paths.source_root, ps);
  REQUIRE(!all.empty());
  for (auto& s : all) {
    std::string text = read(s.file);
    CHECK_MESSAGE(!leak("Here is a kernel:\n```\n" + text + "```\n", s).empty(), s.file);
    // Re-indented and cut to its middle third: still found.
    std::string middle = text.substr(text.size() / 3, text.size() / 3), indented;
    for (char c : middle) indented += c == '\n' ? std::string("\n    ") : std::string(1, c);
    CHECK_MESSAGE(!leak(indented, s).empty(), s.file);
  }
}
