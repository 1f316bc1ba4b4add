// eval/profile.cpp: see profile.h.
#include "eval/profile.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>

#include "eval/ncu_csv.h"
#include "eval/profile_text.h"
#include "eval/sanitizer_log.h"
#include "kf_build_paths.h"
#include "sandbox/process.h"
#include "sandbox/text.h"

namespace fs = std::filesystem;

namespace eval {

using sandbox::read_text;

namespace {

const char* const kStallReasons[] = {"barrier",
                                     "branch_resolving",
                                     "dispatch_stall",
                                     "drain",
                                     "gmma",
                                     "imc_miss",
                                     "lg_throttle",
                                     "long_scoreboard",
                                     "math_pipe_throttle",
                                     "membar",
                                     "mio_throttle",
                                     "misc",
                                     "no_instruction",
                                     "short_scoreboard",
                                     "sleeping",
                                     "tex_throttle",
                                     "wait"};

bool executable(const std::string& p) {
  return !p.empty() && access(p.c_str(), X_OK) == 0 && !fs::is_directory(p);
}

const char* tool_program(Tool t) {
  return t == Tool::ncu ? "ncu" : "compute-sanitizer";
}

}  // namespace

std::string stall_metric(const std::string& reason) {
  return "smsp__warp_issue_stalled_" + reason + "_per_warp_active.pct";
}

std::vector<std::string> metric_set(const std::string& set) {
  std::vector<std::string> m = {"gpu__time_duration.sum", "launch__grid_size", "launch__block_size",
                                "launch__registers_per_thread",
                                "device__attribute_multiprocessor_count"};
  if (set == "time") return m;
  if (set == "brief" || set == "peers") {
    m.insert(m.end(), {"sm__throughput.avg.pct_of_peak_sustained_elapsed",
                       "dram__throughput.avg.pct_of_peak_sustained_elapsed",
                       "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
                       "sm__warps_active.avg.pct_of_peak_sustained_active",
                       "launch__shared_mem_per_block_static",
                       "launch__shared_mem_per_block_dynamic", "launch__waves_per_multiprocessor"});
    for (const char* r : kStallReasons) m.push_back(stall_metric(r));
    if (set == "peers")
      m.insert(m.end(), {"nvltx__bytes.sum", "nvlrx__bytes.sum", "pcie__read_bytes.sum",
                         "pcie__write_bytes.sum"});
    return m;
  }
  std::vector<std::string> list;
  std::stringstream ss(set);
  for (std::string w; std::getline(ss, w, ',');)
    if (!w.empty()) list.push_back(w);
  // One word that is no metric name (they all have "__") is a set name kforge lacks.
  if (list.size() == 1 && list[0].find("__") == std::string::npos) list.clear();
  return list;
}

namespace {

// More metrics than the `time` set's, which ncu collects in one pass: ncu replays the kernel
// for each further pass. (What fits a pass depends on the counters, not the count, so this
// is the rule of thumb that the fallback and the failure's wording both go by.)
bool several_passes(const std::string& metrics) {
  return metric_set(metrics).size() > metric_set("time").size();
}

}  // namespace

std::string find_tool(Tool tool, std::string* why) {
  const char* var = tool == Tool::ncu ? "KFORGE_NCU" : "KFORGE_COMPUTE_SANITIZER";
  const std::string prog = tool_program(tool);
  if (const char* e = std::getenv(var); e && *e) {
    if (executable(e)) return e;
    *why =
        fmt::format("{}={} is not an executable file: point it at {}, or unset it", var, e, prog);
    return "";
  }
  const std::string cuda_bin = fs::path(KF_NVCC).parent_path().string();
  std::vector<std::string> places;
  // The CUDA toolkit's bin/ncu is a script that looks for Nsight Compute's own folder
  // (<toolkit>/nsight-compute-<version>, or /opt/nvidia/nsight-compute/<version>): that
  // folder's ncu is the program, and the sandbox must show its folder. The newest first.
  if (tool == Tool::ncu)
    for (const fs::path& dir :
         {fs::path(cuda_bin).parent_path(), fs::path("/opt/nvidia/nsight-compute")}) {
      std::vector<std::string> found;
      std::error_code ec;
      for (auto& e : fs::directory_iterator(dir, ec)) {
        const std::string n = e.path().filename().string();
        if ((n.rfind("nsight-compute", 0) == 0 || dir.filename() == "nsight-compute") &&
            executable(e.path().string() + "/ncu"))
          found.push_back(e.path().string());
      }
      std::sort(found.rbegin(), found.rend());
      places.insert(places.end(), found.begin(), found.end());
    }
  places.insert(places.end(), {cuda_bin, "/usr/local/cuda/bin"});
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty()) places.push_back(d);
  }
  for (const std::string& d : places)
    if (executable(d + "/" + prog)) return d + "/" + prog;
  *why = fmt::format(
      "{} not found (looked in ${}, /opt/nvidia/nsight-compute, beside {}, /usr/local/cuda/bin and "
      "PATH): install {} (the CUDA toolkit has it) or set {} to it",
      prog, var, KF_NVCC, tool == Tool::ncu ? "Nsight Compute" : "compute-sanitizer", var);
  return "";
}

std::vector<std::string> tool_wrapper(Tool tool, const std::string& exe, const std::string& dir,
                                      const std::vector<std::string>& metrics,
                                      const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {exe};
  argv.insert(argv.end(), extra.begin(), extra.end());
  // The tool's front end expands %q{...} from its own environment: mpirun's rank number.
  const std::string rank = "%q{OMPI_COMM_WORLD_RANK}";
  if (tool == Tool::ncu) {
    std::string list;
    for (const std::string& m : metrics) list += (list.empty() ? "" : ",") + m;
    argv.insert(argv.end(), {"--clock-control", "none", "--target-processes", "all", "--nvtx",
                             "--nvtx-include", "kf_profile]", "--metrics", list, "--launch-count",
                             "64", "-f", "-o", dir + "/rank" + rank});
    return argv;
  }
  argv.insert(argv.end(),
              {"--tool", sandbox::enum_name(tool), "--target-processes", "all", "--print-limit",
               "20", "--log-file", dir + "/sanitizer-rank" + rank + ".log"});
  return argv;
}

namespace {

// The request of an eval, changed into a run under the tool.
void adapt_request(const ProfileOptions& opt, const std::string& exe, sandbox::EvalRequest* req) {
  const bool ncu = opt.tool == Tool::ncu;
  if (!ncu) req->baseline_path = "";  // the candidate's checks are what is rerun
  sandbox::Settings& s = req->settings;
  s.under_tool = true;
  s.race_pass = false;
  sandbox::Limits& l = s.limits;
  // The tool starts with every process and, measuring, replays a kernel per pass; a
  // sanitizer slows every kernel by an order of magnitude or more.
  l.bootstrap_s += 120;
  l.load_s += 60;
  l.setup_s += 60;
  l.total_s += 300;
  if (ncu) {
    s.profile = true;
    s.iters = 1;
    s.verify_every = 1;
    s.trials = 1;
    l.time_s += 120;
  } else {
    l.call_s = std::max(l.call_s * 20, 60.0);
  }
  for (sandbox::Instance& inst : req->instances) {
    inst.job.race = false;
    inst.job.timed = ncu;  // ncu's one size is timed once; a sanitizer only checks
    if (!ncu) inst.job.reference = sandbox::Reference::oracle;
  }
  req->launch.wrapped_ranks = opt.ranks;
  std::error_code ec;
  std::string real = fs::canonical(exe, ec).string();
  if (!ec) req->launch.read_only.push_back(fs::path(real).parent_path().string());
  // A toolkit's wrapper script finds the tool there at run time.
  if (fs::is_directory("/opt/nvidia")) req->launch.read_only.push_back("/opt/nvidia");
  req->launch.linger_s = 120;  // ncu writes its report once the ranks are done
}

// `ncu --import rank<R>.ncu-rep --csv` into rank<R>.csv, and its kernels.
bool import_ncu(const std::string& exe, const std::string& dir, int rank, sandbox::Role judge_side,
                std::vector<KernelProfile>* kernels, std::string* note) {
  const std::string rep = fmt::format("{}/rank{}.ncu-rep", dir, rank);
  sandbox::ProcessSpec spec;
  spec.argv = {exe, "--import", rep, "--csv", "--print-units", "base"};
  spec.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir, "TMPDIR=" + dir};
  spec.limit_s = 120;
  sandbox::ProcessResult pr;
  std::string err;
  if (!sandbox::run_process(spec, &pr, &err) || !pr.ok()) {
    *note = fmt::format("ncu --import {} failed: {}", rep, err.empty() ? pr.output : err);
    return false;
  }
  std::ofstream(fmt::format("{}/rank{}.csv", dir, rank)) << pr.output;
  if (!parse_ncu_csv(pr.output, rank, judge_side, kernels, &err)) {
    *note = rep + ": " + err;
    return false;
  }
  return true;
}

std::vector<int> tool_ranks(const ProfileOptions& opt, int world) {
  if (!opt.ranks.empty()) return opt.ranks;
  std::vector<int> all;
  for (int r = 0; r < world; ++r) all.push_back(r);
  return all;
}

// "; <the first line of `log` that says ERROR>", or "".
std::string first_error(const std::string& log) {
  std::istringstream in(log);
  for (std::string l; std::getline(in, l);)
    if (l.find("ERROR") != std::string::npos) return "; " + l;
  return "";
}

// Why a run under ncu profiled nothing, or did not end correct, in words: what the ranks'
// output says (ncu prints its errors there), and what it means.
std::string ncu_trouble(const sandbox::Verdict& v, bool one_pass) {
  const std::string& log = v.log;
  if (log.find("ERR_NVGPUCTRPERM") != std::string::npos)
    return "no access to the GPU's performance counters here (ERR_NVGPUCTRPERM): an "
           "administrator must allow it (NVreg_RestrictProfilingToAdminUsers=0)";
  std::string s = v.summary + first_error(log);
  if (log.find("timed out after") != std::string::npos &&
      log.find("waiting for signal") != std::string::npos)
    s += one_pass
             ? ". Nsight Compute measures one kernel at a time (the ranks' too), so a kernel that "
               "waits on a peer's flag cannot finish under it where the peer's kernel must run "
               "beside it (ranks sharing one GPU): kf::wait's deadline ended it"
             : ". This metric set takes several passes, and Nsight Compute replays the kernel for "
               "each: kf::wait's deadline ended a replay (--metrics time takes one pass)";
  return s;
}

void read_ncu(const std::string& exe, const std::vector<int>& ranks, sandbox::Role judge_side,
              bool one_pass, ProfileReport* out) {
  std::vector<std::future<std::pair<std::vector<KernelProfile>, std::string>>> jobs;
  for (int r : ranks)
    jobs.push_back(std::async(std::launch::async, [&, r] {
      std::vector<KernelProfile> k;
      std::string note;
      if (fs::exists(fmt::format("{}/rank{}.ncu-rep", out->dir, r)))
        import_ncu(exe, out->dir, r, judge_side, &k, &note);
      return std::make_pair(k, note);
    }));
  std::string problems;
  for (size_t i = 0; i < jobs.size(); ++i) {
    auto [k, note] = jobs[i].get();
    const int r = ranks[i];
    for (const char* f : {"rank{}.ncu-rep", "rank{}.csv"})
      if (fs::exists(out->dir + "/" + fmt::format(fmt::runtime(f), r)))
        out->raw_files.push_back(out->dir + "/" + fmt::format(fmt::runtime(f), r));
    // A launch the run cut short has no duration: it measured nothing.
    for (const KernelProfile& kp : k)
      if (kp.get("gpu__time_duration.sum") >= 0) out->kernels.push_back(kp);
    if (!note.empty())
      problems += fmt::format("{}rank {}: {}", problems.empty() ? "" : "; ", r, note);
  }
  const bool correct = out->verdict.status == sandbox::Status::correct;
  out->status = correct && !out->kernels.empty() ? ProfileStatus::ran : ProfileStatus::failed;
  if (out->verdict.log.find("ERR_NVGPUCTRPERM") != std::string::npos)
    out->status = ProfileStatus::skipped;
  if (out->status != ProfileStatus::ran)
    problems += (problems.empty() ? "" : "; ") +
                std::string(out->kernels.empty() ? "no kernel was profiled: "
                                                 : "the run under ncu did not end correct: ") +
                ncu_trouble(out->verdict, one_pass);
  out->note = problems;
}

void read_sanitizer(const std::vector<int>& ranks, ProfileReport* out) {
  bool any = false;
  for (int r : ranks) {
    std::string path = fmt::format("{}/sanitizer-rank{}.log", out->dir, r);
    if (!fs::exists(path)) continue;
    any = true;
    out->raw_files.push_back(path);
    int errors = 0;
    parse_sanitizer_log(read_text(path), r, &out->findings, &errors);
    out->errors += errors;
  }
  out->status = any ? ProfileStatus::ran : ProfileStatus::failed;
  if (!any) out->note = "compute-sanitizer left no log: " + out->verdict.summary;
}

// One launch under the tool with opt's metrics: profile_file without the fallback.
bool profile_once(const EvalConfig& cfg, const std::string& kernel, sandbox::Role role,
                  const ProfileOptions& opt, ProfileReport* out, std::string* err) {
  *out = ProfileReport{};
  out->tool = opt.tool;
  out->world = cfg.settings.world;
  std::vector<std::string> metrics;
  if (opt.tool == Tool::ncu && (metrics = metric_set(opt.metrics)).empty())
    return (*err = "--metrics " + opt.metrics +
                   ": use brief, time, or a comma-separated list of Nsight Compute metric names",
            false);
  if (cfg.settings.backend == sandbox::Backend::host) {
    out->note = "the host backend runs no GPU code to measure";
    return true;
  }
  std::string why;
  out->tool_path = find_tool(opt.tool, &why);
  if (out->tool_path.empty()) {
    out->note = why;
    return true;
  }
  const auto t0 = std::chrono::steady_clock::now();
  EvalConfig c = cfg;
  if (opt.tool == Tool::ncu) {
    c.settings.sizes = {sizes_to_run(cfg, false).back()};
    c.settings.time = true;
  } else {
    c.settings.time = false;
  }
  sandbox::EvalRequest req;
  if (!make_request(c, kernel, role, &req, err)) return false;
  adapt_request(opt, out->tool_path, &req);
  req.eval_dir = sandbox::make_eval_dir(cfg.paths.runs_dir + "/evals");
  if (req.eval_dir.empty())
    return (*err = "cannot create a run directory under " + cfg.paths.runs_dir + "/evals", false);
  out->dir = req.eval_dir + "/" + req.instances.front().label + "/profile";
  std::error_code ec;
  fs::create_directories(out->dir, ec);
  req.launch.rank_wrapper =
      tool_wrapper(opt.tool, out->tool_path, out->dir, metrics, opt.tool_args);
  out->roofline_ms = req.instances.back().roofline_ms;
  if (!sandbox::evaluate(req, &out->verdict, err)) return false;
  out->emulated = out->verdict.emulated;
  not_a_speed(&out->verdict, opt.tool == Tool::ncu ? "Nsight Compute" : "compute-sanitizer");
  const std::vector<int> ranks = tool_ranks(opt, cfg.settings.world);
  if (opt.tool == Tool::ncu)
    read_ncu(out->tool_path, ranks,
             role == sandbox::Role::baseline ? sandbox::Role::candidate : sandbox::Role::baseline,
             !several_passes(opt.metrics), out);
  else
    read_sanitizer(ranks, out);
  out->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return true;
}

}  // namespace

bool profile_file(const EvalConfig& cfg, const std::string& kernel, sandbox::Role role,
                  const ProfileOptions& opt, ProfileReport* out, std::string* err) {
  if (!profile_once(cfg, kernel, role, opt, out, err)) return false;
  // Ranks sharing one GPU fail under ncu with one pass too (ncu_trouble says why).
  if (opt.tool != Tool::ncu || !several_passes(opt.metrics) ||
      out->status != ProfileStatus::failed || !out->kernels.empty() || out->emulated)
    return true;
  // A kernel that does not survive ncu's replays still has a duration and a shape, which
  // one pass measures: the second launch costs what the first did, and says so.
  ProfileOptions one_pass = opt;
  one_pass.metrics = "time";
  ProfileReport first = std::move(*out);
  if (!profile_once(cfg, kernel, role, one_pass, out, err)) return false;
  out->seconds += first.seconds;
  out->raw_files.insert(out->raw_files.begin(), first.raw_files.begin(), first.raw_files.end());
  out->note = "--metrics " + opt.metrics + " profiled nothing (" + first.note +
              "); measured again with the one-pass set (time)" +
              (out->note.empty() ? "" : ": " + out->note);
  return true;
}

nlohmann::json profile_json(const ProfileReport& r, bool with_verdict) {
  nlohmann::json j = {{"tool", r.tool},         {"status", r.status},
                      {"note", r.note},         {"tool_path", r.tool_path},
                      {"dir", r.dir},           {"raw_files", r.raw_files},
                      {"seconds", r.seconds},   {"world", r.world},
                      {"emulated", r.emulated}, {"roofline_ms", r.roofline_ms},
                      {"kernels", r.kernels},   {"findings", r.findings},
                      {"errors", r.errors}};
  if (with_verdict) j["verdict"] = sandbox::verdict_json(r.verdict);
  return j;
}

}  // namespace eval
