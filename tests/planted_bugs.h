// tests/planted_bugs.h: a problem's planted bugs, found in its folder: each
// problems/<name>/bugs/<bug>.patch is a unified diff of one of the problem's files (its
// "--- " line names it, e.g. examples/host.cpp), which `patch` turns into the wrong kernel
// (its "+++ " line names it, e.g. bugs/wrong_host.cpp); a bugs/<bug>.cpp or .cu is a wrong
// kernel as it stands. The backend is the kernel's extension's: .cpp host, .cu cuda.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sandbox/job_enums.h"
#include "sandbox/process.h"

namespace planted_bugs {

struct Bug {
  std::string file;  // the patch or the kernel, in the problem's bugs/
  std::string base;  // the file a patch changes, in the problem's folder; "" for a kernel
  std::string name;  // the wrong kernel's file name: wrong_host.cpp
  sandbox::Backend backend = sandbox::Backend::host;
};

// The "--- " and "+++ " paths of a unified diff; false when it has none.
inline bool patch_paths(const std::string& patch, std::string* from, std::string* to) {
  std::ifstream in(patch);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("--- ", 0) == 0 && from->empty()) *from = line.substr(4);
    if (line.rfind("+++ ", 0) == 0 && to->empty()) *to = line.substr(4);
  }
  return !from->empty() && !to->empty();
}

inline bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Every bug of the problem in `dir`, by file name; *err names a patch that names no files.
inline std::vector<Bug> find(const std::string& dir, std::string* err) {
  namespace fs = std::filesystem;
  std::vector<Bug> bugs;
  if (!fs::is_directory(dir + "/bugs")) return bugs;
  for (const auto& e : fs::directory_iterator(dir + "/bugs")) {
    Bug b;
    b.file = e.path().string();
    if (ends_with(b.file, ".patch")) {
      std::string to;
      if (!patch_paths(b.file, &b.base, &to)) {
        *err = b.file + ": no \"--- FILE\" and \"+++ FILE\" lines: make it with diff -u";
        continue;
      }
      b.name = fs::path(to).filename().string();
    } else {
      b.name = e.path().filename().string();
    }
    if (!ends_with(b.name, ".cpp") && !ends_with(b.name, ".cu")) continue;
    b.backend = ends_with(b.name, ".cu") ? sandbox::Backend::cuda : sandbox::Backend::host;
    bugs.push_back(b);
  }
  std::sort(bugs.begin(), bugs.end(), [](const Bug& a, const Bug& b) { return a.file < b.file; });
  return bugs;
}

// The wrong kernel of `b` as a file under out_dir (a patch applied by `patch`, a kernel
// as it is); false with *err (patch's own words) when the patch does not apply.
inline bool kernel(const std::string& dir, const Bug& b, const std::string& out_dir,
                   std::string* path, std::string* err) {
  if (b.base.empty()) return (*path = b.file, true);
  *path = out_dir + "/" + b.name;
  sandbox::ProcessSpec spec;
  spec.argv = {"patch", "-s", "-o", *path, dir + "/" + b.base, b.file};
  spec.env = {"PATH=/usr/bin:/bin", "LC_ALL=C"};
  spec.limit_s = 30;
  sandbox::ProcessResult r;
  if (!sandbox::run_process(spec, &r, err)) return false;
  if (r.ok()) return true;
  *err = b.file + " does not apply to " + dir + "/" + b.base + ": " + r.output;
  return false;
}

}  // namespace planted_bugs
