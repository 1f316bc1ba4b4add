// tests/slurm_cluster.h: a real one-node Slurm cluster for a test, on this machine:
// munged with a key of its own, slurmctld and slurmd on free ports, a minimal slurm.conf,
// state, spool and logs in a temporary folder (Debian's slurm-wlm and munge; as root,
// since slurmd starts jobs as their users). Clients reach it through SLURM_CONF. It stops
// with its object: jobs cancelled, daemons stopped, whatever they started killed.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "sandbox/process.h"
#include "tests/kforge_child.h"

namespace slurm_test {

namespace fs = std::filesystem;

// Two free TCP ports: bound together (so they differ) and released for the daemons.
inline bool free_ports(int* a, int* b) {
  int fds[2] = {-1, -1}, ports[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    fds[i] = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fds[i] < 0 || bind(fds[i], reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        getsockname(fds[i], reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      break;
    ports[i] = ntohs(addr.sin_port);
  }
  for (int fd : fds)
    if (fd >= 0) close(fd);
  *a = ports[0];
  *b = ports[1];
  return ports[0] > 0 && ports[1] > 0;
}

class Cluster {
 public:
  Cluster() = default;
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;
  ~Cluster() { stop(); }

  const std::string& dir() const { return dir_; }
  std::string conf_env() const { return "SLURM_CONF=" + dir_ + "/slurm.conf"; }

  // Starts munged, slurmctld and slurmd and waits for the node to be idle. False with
  // *err: what is missing (and how to get it), or which daemon did not come up.
  bool start(std::string* err) {
    for (const char* bin : {"/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd",
                            "/usr/bin/sbatch", "/usr/bin/squeue", "/usr/bin/sinfo"})
      if (access(bin, X_OK) != 0)
        return fail(std::string("no ") + bin +
                        ": Slurm is not installed; run ./kforge-test, which installs Debian's "
                        "slurm-wlm and munge",
                    err);
    if (geteuid() != 0)
      return fail("the test's Slurm daemons run as root (SlurmUser=root): run the tests as root",
                  err);
    char tmpl[] = "/tmp/kforge-slurm-XXXXXX";
    if (!mkdtemp(tmpl)) return fail("cannot make a folder under /tmp", err);
    dir_ = tmpl;
    chmod(dir_.c_str(), 0711);  // munged wants its socket's folder searchable by all
    fs::create_directories(dir_ + "/state");
    fs::create_directories(dir_ + "/spool");
    if (!write_key() || !write_conf()) return fail("cannot write " + dir_, err);
    if (!spawn("munged",
               {"/usr/sbin/munged", "-F", "--force", "--socket=" + dir_ + "/munge.sock",
                "--key-file=" + dir_ + "/munge.key", "--log-file=" + dir_ + "/munged.log",
                "--pid-file=" + dir_ + "/munged.pid", "--seed-file=" + dir_ + "/munged.seed"},
               err))
      return false;
    if (!wait_for([&] { return fs::exists(dir_ + "/munge.sock"); }, 30))
      return fail("munged did not create its socket", err);
    if (!spawn("slurmctld", {"/usr/sbin/slurmctld", "-D", "-i"}, err) ||
        !spawn("slurmd", {"/usr/sbin/slurmd", "-D", "-N", "localhost"}, err))
      return false;
    std::string out;
    if (!wait_for(
            [&] {
              return client({"sinfo", "-h", "-n", "localhost", "-o", "%t"}, &out) == 0 &&
                     out.rfind("idle", 0) == 0;
            },
            120))
      return fail("the node did not come up idle (sinfo says '" + out + "')", err);
    return true;
  }

  // Runs a Slurm client command against this cluster: its exit code, its output in *out.
  int client(const std::vector<std::string>& argv, std::string* out) const {
    sandbox::ProcessSpec spec;
    spec.argv = argv;
    spec.env = {conf_env(), "PATH=/usr/bin:/bin:/usr/sbin:/sbin"};
    spec.limit_s = 60;
    sandbox::ProcessResult r;
    std::string err;
    if (!sandbox::run_process(spec, &r, &err)) return (*out = err, -1);
    *out = r.output;
    return r.timed_out ? -2 : r.exit_code;
  }

  // Waits until job `id` (every task of an array) has left the queue.
  bool wait_job_gone(const std::string& id, double timeout_s) const {
    std::string out;
    return wait_for(
        [&] {
          return client({"squeue", "-h", "-j", id, "-o", "%i"}, &out) == 0 &&
                 out.find_first_not_of(" \n") == std::string::npos;
        },
        timeout_s);
  }

  // The daemons' logs, for a failure's message.
  std::string logs() const {
    std::string s;
    for (const char* f : {"slurmctld.log", "slurmd.log", "munged.log"})
      s += std::string("== ") + f + "\n" + kforge_child::slurp(dir_ + "/" + f) + "\n";
    return s;
  }

  // Cancels every job, stops the daemons (slurmd first), kills what they left, removes the
  // folder. Safe to call twice.
  void stop() {
    if (dir_.empty()) return;
    std::string out;
    if (daemons_.size() == 3) {
      client({"scancel", "--partition=kforge"}, &out);
      wait_for([&] { return client({"squeue", "-h"}, &out) == 0 && out.empty(); }, 30);
    }
    double s = 0;
    for (auto it = daemons_.rbegin(); it != daemons_.rend(); ++it)
      (*it)->signal_and_wait(SIGTERM, 10, &s);
    daemons_.clear();  // what did not stop is killed with its tree
    // Job steps and their processes carry SLURM_CONF, which names this folder.
    for (int pid : kforge_child::processes_naming(dir_)) sandbox::kill_tree(pid);
    sandbox::wait_none_naming(dir_, 10);
    fs::remove_all(dir_);
    dir_.clear();
  }

 private:
  static bool fail(const std::string& what, std::string* err) {
    *err = what;
    return false;
  }

  template <typename F>
  static bool wait_for(F done, double timeout_s) {
    auto until = kforge_child::Clock::now() + std::chrono::duration<double>(timeout_s);
    while (kforge_child::Clock::now() < until) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return done();
  }

  bool write_key() const {
    std::ifstream rnd("/dev/urandom", std::ios::binary);
    std::string key(1024, '\0');
    rnd.read(key.data(), key.size());
    std::string path = dir_ + "/munge.key";
    std::ofstream(path, std::ios::binary) << key;
    return chmod(path.c_str(), 0600) == 0 && rnd;
  }

  // The fewest keys that boot 22.05 as root in a container: no cgroups (linuxproc, no
  // task plugin), no accounting, the node back in service on its own.
  bool write_conf() const {
    int ctld = 0, slurmd = 0;
    if (!free_ports(&ctld, &slurmd)) return false;
    unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
    std::ofstream c(dir_ + "/slurm.conf");
    c << "ClusterName=kforgetest\nSlurmctldHost=localhost\n"
      << "SlurmctldPort=" << ctld << "\nSlurmdPort=" << slurmd << "\n"
      << "SlurmUser=root\nSlurmdUser=root\n"
      << "AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=" << dir_ << "/munge.sock\n"
      << "StateSaveLocation=" << dir_ << "/state\nSlurmdSpoolDir=" << dir_ << "/spool\n"
      << "SlurmctldPidFile=" << dir_ << "/slurmctld.pid\nSlurmdPidFile=" << dir_ << "/slurmd.pid\n"
      << "SlurmctldLogFile=" << dir_ << "/slurmctld.log\nSlurmdLogFile=" << dir_ << "/slurmd.log\n"
      << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
      << "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"
      << "MpiDefault=none\nReturnToService=2\nMailProg=/bin/true\n"
      << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
      << "NodeName=localhost CPUs=" << cpus << " State=UNKNOWN\n"
      << "PartitionName=kforge Nodes=localhost Default=YES MaxTime=INFINITE State=UP\n";
    return static_cast<bool>(c);
  }

  bool spawn(const std::string& name, const std::vector<std::string>& argv, std::string* err) {
    auto d = std::make_unique<kforge_child::Child>();
    std::vector<std::string> env = {conf_env(), "PATH=/usr/bin:/bin:/usr/sbin:/sbin"};
    if (!d->start(argv, env, dir_ + "/" + name + ".out", err)) return false;
    daemons_.push_back(std::move(d));
    if (!sandbox::process_alive(daemons_.back()->pid()))
      return fail(name + " exited at once: " + daemons_.back()->output(), err);
    return true;
  }

  std::string dir_;
  std::vector<std::unique_ptr<kforge_child::Child>> daemons_;  // munged, slurmctld, slurmd
};

}  // namespace slurm_test
