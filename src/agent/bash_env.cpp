// agent/bash_env.cpp: see bash_env.h.
#include "agent/bash_env.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "sandbox/confine.h"
#include "sandbox/launch.h"
#include "sandbox/process.h"
#include "sandbox/secrets.h"
#include "suite/paths.h"

namespace agent {

namespace fs = std::filesystem;

namespace {

void set_env(std::vector<std::string>* env, const std::string& kv) {
  std::string prefix = kv.substr(0, kv.find('=') + 1);
  for (auto& e : *env)
    if (e.rfind(prefix, 0) == 0) {
      e = kv;
      return;
    }
  env->push_back(kv);
}

std::string get_env(const std::vector<std::string>& env, const std::string& name) {
  for (auto& e : env)
    if (e.rfind(name + "=", 0) == 0) return e.substr(name.size() + 1);
  return "";
}

std::string self_exe() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "" : p.string();
}

bool executable(const std::string& p) {
  return !p.empty() && access(p.c_str(), X_OK) == 0;
}

// Single quotes for sh: ' becomes '\''.
std::string sh_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The wrapper removes key-like variables again: a command may export one before it runs
// kforge, and kforge must not hand it on to a kernel. It runs only the subcommands that
// judge the agent's own kernel: `tune` would write the expert kernels (the problem's
// solutions) into the workspace, `problems --json` names the problems' folders, and
// `solve`, `show` and `replay` have no use inside.
std::string wrapper_script(const std::string& real, const std::string& dot) {
  return "#!/bin/sh\n"
         "# Written by kforge (agent/bash_env.cpp): the real kforge, with its runs and build\n"
         "# cache kept in this workspace.\n"
         "for v in $(env | sed -n 's/^\\([A-Za-z_][A-Za-z0-9_]*\\)=.*/\\1/p'); do\n"
         "  case \"$v\" in\n"
         "    *[Kk][Ee][Yy]*|*[Tt][Oo][Kk][Ee][Nn]*|*[Ss][Ee][Cc][Rr][Ee][Tt]*|"
         "*[Pp][Aa][Ss][Ss][Ww][Oo][Rr][Dd]*|*[Cc][Rr][Ee][Dd][Ee][Nn][Tt][Ii][Aa][Ll]*)"
         " unset \"$v\" ;;\n"
         "  esac\n"
         "done\n"
         "case \"${1:-}\" in\n"
         "  eval|baseline|help|-h|--help|--version|'') ;;\n"
         "  *) echo \"kforge $1: not available in the agent's workspace (eval and baseline "
         "are)\" >&2; exit 2 ;;\n"
         "esac\n"
         "KFORGE_RUNS=" +
         sh_quote(dot + "/runs") +
         "; export KFORGE_RUNS\n"
         "KFORGE_CACHE=" +
         sh_quote(dot + "/cache") +
         "; export KFORGE_CACHE\n"
         "exec " +
         sh_quote(real) + " \"$@\"\n";
}

bool write_file(const std::string& path, const std::string& text, std::string* err) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out.flush()) {
    *err = path + ": cannot write";
    return false;
  }
  return true;
}

// What an agent command sees: its workspace (read-write), kforge's three programs and its
// primitives (the headers and their docs), and of each problem only the files a nested
// `kforge eval` needs: never a solution, an example or a test kernel.
sandbox::Confinement agent_jail(const std::string& workspace, const std::string& kforge_bin,
                                double timeout_s) {
  sandbox::Confinement c;
  c.writable = {workspace};
  suite::Paths paths = suite::default_paths();
  std::string bin_dir =
      fs::path(kforge_bin.empty() ? self_exe() : kforge_bin).parent_path().string();
  for (const char* exe : {"kforge", "kforge-rank", "kforge-runner", "kforge-confine"})
    c.read_only.push_back(bin_dir + "/" + exe);
  if (!kforge_bin.empty()) c.read_only.push_back(kforge_bin);
  c.read_only.push_back(paths.rank_binary);
  c.read_only.push_back(fs::path(paths.rank_binary).parent_path().string() + "/kforge-runner");
  c.read_only.push_back(fs::path(paths.include_dir).parent_path().string());  // primitives/
  std::error_code ec;
  for (auto& e : fs::directory_iterator(paths.problems_dir, ec)) {
    if (!e.is_directory()) continue;
    for (const char* f : {"problem.json", "baseline.cu", "baseline_host.cpp", "oracle.cpp"})
      c.read_only.push_back((e.path() / f).string());
  }
  c.gpu = suite::detect_backend() == sandbox::Backend::cuda;
  c.memory_bytes = sandbox::LaunchOptions::default_job_memory();
  c.max_pids = 4096;
  c.cpu_s = std::ceil(timeout_s) + 60;
  return c;
}

}  // namespace

std::string valid_utf8(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned char c = p[i];
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xE  ? 3
                 : (c >> 3) == 0x1E ? 4
                                    : 0;
    bool ok = len > 0 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k) ok = (p[i + k] & 0xC0) == 0x80;
    if (ok && len > 1) {
      // Overlong forms, surrogates and code points past U+10FFFF are invalid too.
      uint32_t cp = len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
      for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (p[i + k] & 0x3F);
      ok = !(len == 2 && cp < 0x80) && !(len == 3 && cp < 0x800) && !(len == 4 && cp < 0x10000) &&
           !(cp >= 0xD800 && cp <= 0xDFFF) && cp <= 0x10FFFF;
    }
    if (ok) {
      out.append(s, i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    }
  }
  return out;
}

std::string elide(const std::string& s, size_t dropped, size_t* elided_chars) {
  *elided_chars = 0;
  if (dropped == 0 && s.size() <= kElideOver) return valid_utf8(s);
  size_t keep = std::min(kElideKeep, s.size() / 2);
  // With dropped > 0 the capture kept exactly head and tail (and its own marker between).
  *elided_chars = dropped > 0 ? dropped : s.size() - 2 * keep;
  return valid_utf8(s.substr(0, keep)) +
         fmt::format("\n[... {} characters elided ...]\n", *elided_chars) +
         valid_utf8(s.substr(s.size() - keep));
}

bool is_submission(const std::string& output, int returncode, std::string* submission) {
  if (returncode != 0) return false;
  size_t start = output.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return false;
  size_t eol = output.find('\n', start);
  std::string first =
      output.substr(start, eol == std::string::npos ? std::string::npos : eol - start);
  while (!first.empty() && isspace(static_cast<unsigned char>(first.back()))) first.pop_back();
  if (first != kSubmitSentinel) return false;
  *submission = eol == std::string::npos ? "" : output.substr(eol + 1);
  return true;
}

bool BashEnv::init(const std::string& workspace, const std::vector<std::string>& extra_env,
                   double timeout_s, std::string* err) {
  std::error_code ec;
  fs::create_directories(workspace, ec);
  fs::path ws = fs::canonical(workspace, ec);
  if (ec) {
    *err = "workspace " + workspace + ": " + ec.message() + " (give a directory kforge can create)";
    return false;
  }
  workspace_ = ws.string();
  timeout_s_ = timeout_s > 0 ? timeout_s : 30;
  std::string dot = workspace_ + "/.kforge";
  for (const char* sub : {"bin", "tmp", "runs", "cache"}) {
    fs::create_directories(dot + "/" + sub, ec);
    if (ec) {
      *err = dot + "/" + sub + ": " + ec.message();
      return false;
    }
  }

  std::string kforge_bin = get_env(extra_env, "KFORGE_BIN");
  std::string self = self_exe();
  if (kforge_bin.empty() && fs::path(self).filename() == "kforge") kforge_bin = self;
  if (!kforge_bin.empty()) {
    if (!executable(kforge_bin)) {
      *err = "KFORGE_BIN=" + kforge_bin + " is not an executable (name the kforge binary)";
      return false;
    }
    std::string wrapper = dot + "/bin/kforge";
    if (!write_file(wrapper, wrapper_script(fs::absolute(kforge_bin).string(), dot), err))
      return false;
    chmod(wrapper.c_str(), 0755);
  }

  env_ = sandbox::scrubbed_env(workspace_, false, {});
  set_env(&env_, "TMPDIR=" + dot + "/tmp");
  set_env(&env_, "PATH=" + dot + "/bin:" + get_env(env_, "PATH"));
  for (const char* kv :
       {"PAGER=cat", "MANPAGER=cat", "LESS=-R", "PIP_PROGRESS_BAR=off", "TQDM_DISABLE=1"})
    set_env(&env_, kv);
  // What a nested `kforge eval` needs to find the same problems and backend.
  for (const char* name : {"KFORGE_ROOT", "KFORGE_PROBLEMS", "KFORGE_BACKEND"}) {
    std::string e = sandbox::env_entry(name);
    if (!e.empty()) set_env(&env_, e);
  }
  for (const auto& kv : extra_env) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0 || sandbox::looks_secret(kv.substr(0, eq))) continue;
    if (kv.rfind("KFORGE_BIN=", 0) == 0 || kv.rfind("KFORGE_CONFINE=", 0) == 0) continue;
    set_env(&env_, kv);
  }

  jail_ = agent_jail(workspace_, kforge_bin, timeout_s_);
  std::string why;
  const sandbox::Isolation mode = sandbox::isolation_mode(&why);
  if (mode == sandbox::Isolation::unavailable) {
    *err = why;
    return false;
  }
  isolation_ = mode == sandbox::Isolation::bwrap
                   ? "bwrap: reads only the toolchain, kforge and the problems' public files; "
                     "writes only beneath " +
                         workspace_ + "; no network; no kforge process in view"
               : mode == sandbox::Isolation::nested ? "inside kforge's sandbox already"
                                                    : "NOT confined (" + why + ")";
  return true;
}

BashResult BashEnv::run(const std::string& command,
                        const std::function<void(const std::string&)>& on_output) {
  BashResult r;
  sandbox::ProcessSpec spec;
  if (on_output) spec.on_output = [&](const char* p, size_t n) { on_output(std::string(p, n)); };
  spec.argv = {"bash", "-c", command};
  spec.env = env_;
  spec.cwd = workspace_;
  spec.limit_s = timeout_s_;
  spec.output_cap = 2 * kElideKeep;  // the capture keeps exactly the head and tail we show
  sandbox::ProcessResult pr;
  std::string err;
  sandbox::Confined confined;
  if (!confined.prepare(jail_, &spec, &err) || !sandbox::run_process(spec, &pr, &err)) {
    r.output = "kforge: cannot run the command: " + err;
    return r;
  }
  if (confined.finish().oom_killed)
    pr.output +=
        fmt::format("\n[kforge: the command went past its memory limit of {} MiB and was killed]\n",
                    jail_.memory_bytes >> 20);
  r.returncode = pr.signal ? 128 + pr.signal : pr.exit_code;
  r.timed_out = pr.timed_out;
  r.output = elide(pr.output, pr.elided_bytes, &r.elided_chars);
  if (!r.timed_out) r.submitted = is_submission(r.output, r.returncode, &r.submission);
  return r;
}

}  // namespace agent
