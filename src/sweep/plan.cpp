// src/sweep/plan.cpp: the sweep's plan (sweep.h): what is run, and DIR/sweep.json.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "sweep/sweep.h"

namespace sweep {

namespace fs = std::filesystem;

std::string model_dir(const std::string& model) {
  std::string d;
  for (char ch : model)
    d += std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '.' ? ch : '_';
  return d.empty() ? "default" : d;
}

std::vector<Sample> plan(const std::vector<std::string>& problems,
                         const std::vector<std::string>& categories,
                         const std::vector<std::string>& models, int samples) {
  std::vector<Sample> out;
  for (const std::string& m : models)
    for (size_t p = 0; p < problems.size(); ++p)
      for (int i = 0; i < samples; ++i)
        out.push_back({problems[p], p < categories.size() ? categories[p] : "", m, i});
  return out;
}

bool write_plan(const std::string& dir, const PlanFile& p, std::string* err) {
  // Written beside and renamed over: a reader (or a kill) never sees half a plan; the
  // host and pid keep two writers (Slurm tasks, on one node or several sharing the
  // folder) off each other's temporary file.
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string path = dir + "/sweep.json", tmp = fmt::format("{}.{}.{}.tmp", path, host, getpid());
  {
    std::ofstream out(tmp);
    out << nlohmann::json(p).dump(2) << "\n";
    if (!out) {
      *err = tmp + ": cannot write the sweep's plan: " + std::strerror(errno);
      return false;
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) *err = path + ": cannot write the sweep's plan: " + ec.message();
  return !ec;
}

bool read_plan(const std::string& dir, PlanFile* p, std::string* err) {
  std::ifstream in(dir + "/sweep.json");
  if (!in) return false;
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  try {
    if (j.is_discarded()) throw std::runtime_error("not JSON");
    *p = j.get<PlanFile>();
  } catch (const std::exception& e) {
    *err = dir + "/sweep.json does not read (" + e.what() + "); remove it to start afresh";
    return false;
  }
  return true;
}

bool same_sweep(const PlanFile& before, const PlanFile& now, std::string* err) {
  auto words = [](const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& w : v) s += (s.empty() ? "" : " ") + w;
    return s.empty() ? std::string("(none)") : s;
  };
  if (before.mode != now.mode)
    *err = fmt::format("--mode {} here, {} before", now.mode, before.mode);
  else if (before.solve_args != now.solve_args)
    *err = fmt::format("solve options '{}' here, '{}' before", words(now.solve_args),
                       words(before.solve_args));
  return err->empty();
}

}  // namespace sweep
