// sandbox/confine.cpp: see confine.h. The bwrap command line, the cgroup's life, and the
// one probe that says whether this machine can make namespaces at all.
#include "confine.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "kf_build_paths.h"
#include "text.h"

namespace fs = std::filesystem;

namespace sandbox {

namespace {

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  return static_cast<bool>(out.flush());
}

std::string self_dir() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "" : p.parent_path().string();
}

// What a confined process needs of /etc: the dynamic loader's cache, users and groups
// (OpenMPI and bash look themselves up), OpenMPI's and PMIx's defaults, and the
// alternatives links that Debian's compilers and mpirun go through. Not the rest: no
// ssh keys, no shadow, no machine secrets.
const char* const kEtc[] = {"/etc/ld.so.cache",  "/etc/ld.so.conf",  "/etc/ld.so.conf.d",
                            "/etc/alternatives", "/etc/openmpi",     "/etc/pmix",
                            "/etc/passwd",       "/etc/group",       "/etc/nsswitch.conf",
                            "/etc/hosts",        "/etc/localtime",   "/etc/host.conf",
                            "/etc/gai.conf",     "/etc/bash.bashrc", "/etc/inputrc",
                            "/etc/profile",      "/etc/os-release"};

// /bin, /lib... are symlinks into /usr on merged-/usr systems and directories elsewhere.
void add_root_dir(const std::string& d, std::vector<std::string>* a) {
  std::error_code ec;
  auto st = fs::symlink_status(d, ec);
  if (ec || !fs::exists(st)) return;
  if (fs::is_symlink(st)) {
    a->insert(a->end(), {"--symlink", fs::read_symlink(d, ec).string(), d});
  } else {
    a->insert(a->end(), {"--ro-bind", d, d});
  }
}

// cgroup v2: the unified hierarchy's path of this process ("0::/path"); v1: the
// controller's ("N:memory:/path"). "" when there is none.
std::string own_cgroup(const std::string& controller) {
  std::istringstream in(read_text("/proc/self/cgroup"));
  std::string line;
  while (std::getline(in, line)) {
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string ctrls = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (controller.empty() ? ctrls.empty() && line.rfind("0:", 0) == 0
                           : ("," + ctrls + ",").find("," + controller + ",") != std::string::npos)
      return path;
  }
  return "";
}

std::string unique_name() {
  static int n = 0;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  return fmt::format("kforge-{}-{}", getpid(), ++n);
}

// Removes the empty cgroups that an earlier kforge made in `parent` and left behind
// (killed before it could, or its supervisor too): named kforge-PID-N, PID gone. rmdir
// takes only an empty cgroup, so a run still going is never touched.
void sweep_stale_cgroups(const std::string& parent) {
  static std::set<std::string> swept;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (!swept.insert(parent).second) return;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(parent, ec)) {
    int pid = 0, n = 0;
    if (sscanf(e.path().filename().c_str(), "kforge-%d-%d", &pid, &n) != 2 || pid <= 0) continue;
    if (kill(pid, 0) != 0 && errno == ESRCH) rmdir(e.path().c_str());
  }
}

// Makes one cgroup for a run; v2 when the unified hierarchy has the memory controller
// for our subtree, else v1's memory and pids hierarchies. Fills *dirs and *mem (the one
// whose OOM counter tells); false with *why when neither can be had.
bool make_cgroups(const Confinement& c, std::vector<std::string>* dirs, std::string* mem,
                  std::string* how, std::string* why) {
  std::string name = unique_name();
  std::string limits = fmt::format("memory {} MiB, pids {}", c.memory_bytes >> 20, c.max_pids);
  // v2: beneath the deepest of our cgroup and its ancestors that hands the memory
  // controller down (a process may not sit in a cgroup that has controllers enabled for
  // its children, so our own rarely does; as root we may make one higher up).
  if (fs::exists("/sys/fs/cgroup/cgroup.controllers")) {
    for (fs::path at = "/sys/fs/cgroup" + own_cgroup("");
         at.string().rfind("/sys/fs/cgroup", 0) == 0; at = at.parent_path()) {
      if (read_text((at / "cgroup.subtree_control").string()).find("memory") == std::string::npos) {
        if (at == "/sys/fs/cgroup") break;
        continue;
      }
      sweep_stale_cgroups(at.string());
      std::string d = (at / name).string();
      if (mkdir(d.c_str(), 0755) != 0) break;
      dirs->push_back(d);
      *mem = d;
      bool ok =
          (c.memory_bytes == 0 || write_text(d + "/memory.max", std::to_string(c.memory_bytes))) &&
          (c.max_pids == 0 || !fs::exists(d + "/pids.max") ||
           write_text(d + "/pids.max", std::to_string(c.max_pids)));
      write_text(d + "/memory.swap.max", "0");
      if (ok) {
        *how = "cgroup v2 (" + limits + ")";
        return true;
      }
      break;
    }
  }
  for (const char* ctrl : {"memory", "pids"}) {
    std::string own = own_cgroup(ctrl);
    std::string root = std::string("/sys/fs/cgroup/") + ctrl;
    if (own.empty() || !fs::exists(root + "/cgroup.procs")) continue;
    sweep_stale_cgroups(root + (own == "/" ? "" : own));
    std::string d = root + (own == "/" ? "" : own) + "/" + name;
    if (mkdir(d.c_str(), 0755) != 0) continue;
    dirs->push_back(d);
    if (std::string(ctrl) == "memory") {
      if (c.memory_bytes &&
          !write_text(d + "/memory.limit_in_bytes", std::to_string(c.memory_bytes)))
        continue;
      write_text(d + "/memory.memsw.limit_in_bytes", std::to_string(c.memory_bytes));
      *mem = d;
    } else if (c.max_pids) {
      write_text(d + "/pids.max", std::to_string(c.max_pids));
    }
  }
  if (!mem->empty()) {
    *how = "cgroup v1 (" + limits + ")";
    return true;
  }
  *why =
      "no cgroup could be made here (neither v2 with the memory controller delegated nor "
      "a writable v1 memory hierarchy)";
  return false;
}

std::vector<int> cgroup_pids(const std::string& dir) {
  std::vector<int> pids;
  std::istringstream in(read_text(dir + "/cgroup.procs"));
  int p;
  while (in >> p) pids.push_back(p);
  return pids;
}

long counter(const std::string& file, const std::string& key) {
  std::istringstream in(read_text(file));
  std::string k;
  long v;
  while (in >> k >> v)
    if (k == key) return v;
  return 0;
}

}  // namespace

std::string confine_binary() {
  if (const char* e = std::getenv("KFORGE_CONFINE"); e && *e) return e;
  std::string d = self_dir();
  for (const std::string& cand :
       {d + "/kforge-confine", std::string(KF_BINARY_DIR) + "/kforge-confine"})
    if (access(cand.c_str(), X_OK) == 0) return cand;
  return "";
}

Isolation isolation_mode(std::string* why_not) {
  static std::once_flag once;
  static Isolation mode = Isolation::unavailable;
  static std::string why;
  std::call_once(once, [] {
    const char* e = std::getenv("KFORGE_ISOLATION");
    std::string want = e ? e : "";
    // Inside a sandbox of ours, its first process is bwrap: the variable alone, which
    // anyone can set, does not turn confinement off.
    if (std::getenv("KFORGE_SANDBOXED") && read_text("/proc/1/comm") == "bwrap\n") {
      mode = Isolation::nested;
      return;
    }
    if (want == "none") {
      mode = Isolation::none;
      why = "KFORGE_ISOLATION=none";
      return;
    }
    // One real sandbox, as every run will make it, running `true`.
    ProcessSpec spec;
    spec.argv = {"bwrap"};
    Confinement probe;
    for (auto& a : bwrap_args(probe, "/")) spec.argv.push_back(a);
    spec.argv.push_back("true");
    spec.env = {"PATH=/usr/bin:/bin"};
    spec.limit_s = 20;
    ProcessResult r;
    std::string err;
    if (run_process(spec, &r, &err) && r.ok()) {
      mode = Isolation::bwrap;
      return;
    }
    mode = Isolation::unavailable;
    std::string said = err.empty() ? r.output : err;
    while (!said.empty() && isspace(static_cast<unsigned char>(said.back()))) said.pop_back();
    why = "bubblewrap cannot make a sandbox here (" + said +
          "): install it (apt-get install bubblewrap, or ./kforge-test which does) or, only for "
          "kernels and models you trust, set KFORGE_ISOLATION=none";
  });
  if (why_not) *why_not = why;
  return mode;
}

std::vector<std::string> bwrap_args(const Confinement& c, const std::string& cwd) {
  std::vector<std::string> a = {"--die-with-parent", "--unshare-all", "--new-session", "--cap-drop",
                                "ALL"};
  a.insert(a.end(), {"--ro-bind", "/usr", "/usr"});
  for (const char* d : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"})
    add_root_dir(d, &a);
  for (const char* f : kEtc)
    if (fs::exists(f)) a.insert(a.end(), {"--ro-bind", f, f});
  a.insert(a.end(), {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/dev/shm"});
  // bwrap leaves the new /proc's sys/ writable, and kforge often runs as root: a job could
  // set the host's global sysctls (kernel.core_pattern runs a program as root on the next
  // crash) or crash the host through sysrq-trigger. Read-only, as the host's.
  for (const char* p : {"/proc/sys", "/proc/sysrq-trigger"})
    if (fs::exists(p)) a.insert(a.end(), {"--ro-bind", p, p});
  // Read-only: hwloc (OpenMPI) reads the CPU topology there, CUDA and NCCL the PCI tree.
  a.insert(a.end(), {"--ro-bind", "/sys", "/sys"});
  if (c.gpu) {
    std::error_code ec;
    for (auto& e : fs::directory_iterator("/dev", ec)) {
      std::string n = e.path().filename().string();
      if (n.rfind("nvidia", 0) == 0)
        a.insert(a.end(), {"--dev-bind", e.path().string(), e.path().string()});
    }
    if (fs::exists("/proc/driver/nvidia"))
      a.insert(a.end(), {"--ro-bind", "/proc/driver/nvidia", "/proc/driver/nvidia"});
  }
  // The libraries kforge-rank and the candidates load, wherever they are: NCCL's folder
  // (pip's NCCL on the lent GPU machines) and the loader's search path.
  std::vector<std::string> ro = c.read_only;
  ro.push_back(KF_NCCL_LIB_DIR);
  if (const char* ld = std::getenv("LD_LIBRARY_PATH")) {
    std::stringstream ss(ld);
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty() && d[0] == '/') ro.push_back(d);
  }
  for (auto& p : ro) {
    // Under /usr it is there already, and bwrap cannot make a mount point through a
    // symlink of the read-only /usr (/usr/local/cuda -> cuda-13.0).
    std::error_code ec;
    std::string real = fs::canonical(p, ec).string();
    if (ec || real.rfind("/usr/", 0) == 0) continue;
    a.insert(a.end(), {"--ro-bind", real, p});
  }
  for (auto& p : c.writable) a.insert(a.end(), {"--bind", p, p});
  a.insert(a.end(),
           {"--setenv", "KFORGE_SANDBOXED", "1", "--chdir", cwd.empty() ? "/" : cwd, "--"});
  return a;
}

Confined::~Confined() {
  if (!finished_) finish();
}

bool Confined::prepare(const Confinement& c, ProcessSpec* spec, std::string* err) {
  run_ = ConfinedRun{};
  std::string why;
  const Isolation mode = isolation_mode(&why);
  if (mode == Isolation::unavailable) {
    *err = why;
    return false;
  }
  std::string confine = confine_binary();
  if (confine.empty()) {
    *err = "kforge-confine is missing beside kforge: rebuild (./kforge-test builds it)";
    return false;
  }
  std::vector<std::string> pre = {confine, "--parent", std::to_string(getpid())};
  if (c.cpu_s > 0) pre.insert(pre.end(), {"--cpu", std::to_string(static_cast<long>(c.cpu_s))});
  if (c.fsize_bytes > 0)
    pre.insert(pre.end(), {"--fsize-mib", std::to_string(c.fsize_bytes >> 20)});
  std::vector<std::string> parts;
  if (mode == Isolation::bwrap && (c.memory_bytes > 0 || c.max_pids > 0)) {
    std::string how, cg_why;
    if (make_cgroups(c, &cgroups_, &memory_cgroup_, &how, &cg_why)) {
      for (auto& d : cgroups_) pre.insert(pre.end(), {"--cgroup", d});
      parts.push_back(how);
    } else {
      // A per-process address-space limit instead, where it does not break the program:
      // CUDA reserves far more virtual memory than it uses, so not on the GPU.
      if (!c.gpu && c.memory_bytes > 0)
        pre.insert(pre.end(), {"--as-mib", std::to_string(c.memory_bytes >> 20)});
      parts.push_back(cg_why + (c.gpu ? "; no memory limit" : "; RLIMIT_AS per process instead"));
    }
  }
  finished_ = false;
  if (mode == Isolation::bwrap) {
    pre.push_back("--");
    pre.push_back("bwrap");
    for (auto& a : bwrap_args(c, spec->cwd)) pre.push_back(a);
    parts.insert(parts.begin(), "bwrap (own mount, PID and network namespaces; read-only binds)");
  } else {
    pre.push_back("--");
    parts.insert(parts.begin(), mode == Isolation::nested ? "inside kforge's sandbox already"
                                                          : "NOT confined (" + why + ")");
  }
  pre.insert(pre.end(), spec->argv.begin(), spec->argv.end());
  spec->argv = pre;
  for (auto& p : parts) run_.how += (run_.how.empty() ? "" : "; ") + p;
  return true;
}

ConfinedRun Confined::finish() {
  if (finished_) return run_;
  finished_ = true;
  for (auto& d : cgroups_) {
    // The sandbox's first process is still exiting for a moment after the program that
    // waited for it returned: give the group a while to empty by itself. Whatever is left
    // then (a process that escaped the job's process group and the PID namespace's
    // death alike; in practice nothing) is killed, counted, and waited for.
    auto empty_within = [&](int rounds) {
      for (int i = 0; i < rounds; ++i) {
        if (cgroup_pids(d).empty()) return true;
        usleep(5000);
      }
      return cgroup_pids(d).empty();
    };
    if (empty_within(400)) continue;
    std::vector<int> left = cgroup_pids(d);
    run_.leftovers_killed += static_cast<int>(left.size());
    for (int round = 0; round < 100 && !left.empty();
         ++round) {  // up to 15 s: a GPU context takes seconds to go
      if (fs::exists(d + "/cgroup.kill")) write_text(d + "/cgroup.kill", "1");
      for (int p : left) kill(p, SIGKILL);
      empty_within(30);
      left = cgroup_pids(d);
    }
  }
  if (!memory_cgroup_.empty()) {
    std::string events = fs::exists(memory_cgroup_ + "/memory.events")
                             ? memory_cgroup_ + "/memory.events"
                             : memory_cgroup_ + "/memory.oom_control";
    run_.oom_killed = counter(events, "oom_kill") > 0;
  }
  for (auto& d : cgroups_) {
    if (fs::exists(d + "/pids.events"))
      run_.pids_exhausted = run_.pids_exhausted || counter(d + "/pids.events", "max") > 0;
    for (int round = 0; round < 200 && rmdir(d.c_str()) != 0 && errno == EBUSY; ++round)
      usleep(10000);
  }
  cgroups_.clear();
  memory_cgroup_.clear();
  return run_;
}

}  // namespace sandbox
