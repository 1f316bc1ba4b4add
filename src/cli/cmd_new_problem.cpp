// src/cli/cmd_new_problem.cpp: `kforge new-problem`: copy a problem folder under a new name.
#include "cli/cmd_new_problem.h"

#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands.h"
#include "suite/paths.h"
#include "suite/problem.h"
#include "suite/spec_json.h"

namespace cli {

namespace fs = std::filesystem;

namespace {

// The folder --from names: a path as given, else a problem of the problems path, else one
// of the checkout's (a scratch KFORGE_PROBLEMS holds none to copy yet).
bool find_template(std::string from, const suite::Paths& paths, std::string* dir,
                   std::string* err) {
  if (from.empty() && !suite::default_problem(paths.source_root + "/problems", &from, err)) {
    *err = "no default problem to copy (" + *err + "): name one with --from";
    return false;
  }
  std::vector<std::string> tried;
  if (from.find('/') != std::string::npos) tried.push_back(from);
  tried.push_back(paths.problems_dir + "/" + from);
  tried.push_back(paths.source_root + "/problems/" + from);
  for (const std::string& d : tried)
    if (fs::exists(d + "/problem.json")) {
      *dir = fs::absolute(d).lexically_normal().string();
      return true;
    }
  std::string where;
  for (const std::string& d : tried) where += (where.empty() ? "" : " or ") + d;
  *err = fmt::format(
      "--from {}: no problem folder (with a problem.json) at {}: name one that "
      "`kforge problems` lists, or give a folder's path",
      from, where);
  return false;
}

// problem.json under its new name, its text kept: the top-level "name" is set, and the
// lines of "mirrors" (the copy twins no benchmark problem yet) and "default" (one problem
// only is the default) are dropped.
bool rename_spec(const std::string& file, const std::string& old_name, const std::string& name,
                 std::string* err) {
  std::ifstream in(file);
  if (!in) return (*err = file + ": cannot read", false);
  std::string out, line;
  bool renamed = false;
  while (std::getline(in, line)) {
    if (line.rfind("  \"mirrors\":", 0) == 0 || line.rfind("  \"default\":", 0) == 0) continue;
    const std::string key = "\"name\": \"" + old_name + "\"";
    size_t at = line.find(key);
    if (!renamed && line.rfind("  \"name\":", 0) == 0 && at != std::string::npos) {
      line.replace(at, key.size(), "\"name\": \"" + name + "\"");
      renamed = true;
    }
    out += line + "\n";
  }
  if (!renamed)
    return (
        *err = fmt::format("{}: no top-level line `\"name\": \"{}\"` to rename", file, old_name),
        false);
  std::ofstream o(file, std::ios::trunc);
  o << out;
  if (!o.flush()) return (*err = file + ": cannot write", false);
  return true;
}

// Copies the folder without its tests (*_test.cpp: compiled into kforge's own test binary,
// they name the old problem) and without build leftovers.
bool copy_folder(const std::string& from, const std::string& to, std::string* err) {
  std::error_code ec;
  fs::create_directories(to, ec);
  for (auto it = fs::recursive_directory_iterator(from, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const fs::path rel = fs::relative(it->path(), from);
    const std::string fname = rel.filename().string();
    if (fname.size() > 9 && fname.compare(fname.size() - 9, 9, "_test.cpp") == 0) continue;
    if (it->is_directory())
      fs::create_directories(fs::path(to) / rel, ec);
    else if (it->is_regular_file())
      fs::copy_file(it->path(), fs::path(to) / rel, ec);
    if (ec) break;
  }
  if (ec) *err = fmt::format("cannot copy {} to {}: {}", from, to, ec.message());
  return !ec;
}

void print_next_steps(const std::string& dir, const std::string& name) {
  fmt::print(
      "made {dir}\n"
      "Edit, in this order (docs/adding-a-problem.md says more):\n"
      "  problem.json       the description the model reads, params, sizes, tensors, tolerance,"
      " cost\n"
      "  oracle.cpp         the CPU reference, in double precision (KF_ORACLE)\n"
      "  baseline_host.cpp  the reference on the host backend; baseline.cu as PyTorch + NCCL\n"
      "  examples/host.cpp  a simple correct candidate; examples/uva.cu its CUDA twin\n"
      "  bugs/*.patch       planted bugs: patches of the examples that must be a mismatch\n"
      "  search.json, solution*.cu|cpp  the expert kernel and its knobs (optional: without\n"
      "                     them the builtin model says it cannot write this problem)\n"
      "Then check it, with no rebuild of kforge:\n"
      "  kforge eval {name} --backend host --world 2\n"
      "  kforge baseline {name} --backend host --world 2\n",
      fmt::arg("dir", dir), fmt::arg("name", name));
}

}  // namespace

CLI::App* add_new_problem_command(CLI::App& app, NewProblemArgs* a) {
  CLI::App* c = app.add_subcommand(
      "new-problem", "start a problem: copy an existing problem's folder under a new name");
  c->add_option("name", a->name, "the new problem's name (letters, digits, underscores)")
      ->required();
  c->add_option("--from", a->from,
                "the problem to copy: a name in the problems path or a folder (default: the "
                "default problem)");
  return c;
}

int cmd_new_problem(const NewProblemArgs& a) {
  if (!suite::is_identifier(a.name)) {
    fmt::print(stderr,
               "kforge new-problem: '{}' is not a problem name: use letters, digits and "
               "underscores, not starting with a digit\n",
               a.name);
    return kBadInput;
  }
  const suite::Paths paths = suite::default_paths();
  std::string from, err;
  if (!find_template(a.from, paths, &from, &err)) {
    fmt::print(stderr, "kforge new-problem: {}\n", err);
    return kBadInput;
  }
  const std::string dir = paths.problems_dir + "/" + a.name;
  if (fs::exists(dir)) {
    fmt::print(stderr,
               "kforge new-problem: {} exists: pick another name, or set KFORGE_PROBLEMS to "
               "another problems folder\n",
               dir);
    return kBadInput;
  }
  suite::Problem p;
  if (!copy_folder(from, dir, &err) ||
      !rename_spec(dir + "/problem.json", fs::path(from).filename().string(), a.name, &err)) {
    fmt::print(stderr, "kforge new-problem: {}\n", err);
    return kInternal;
  }
  if (!suite::load_problem(dir, &p, &err)) {
    fmt::print(stderr, "kforge new-problem: the copy does not load: {}\nfix {}/problem.json\n", err,
               dir);
    return kInternal;
  }
  print_next_steps(dir, a.name);
  return kOk;
}

}  // namespace cli
