// sandbox/symbols.cpp: parse nm/readelf output and hold it against the import bans.
#include "symbols.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "job.h"
#include "process.h"

namespace sandbox {

namespace {

bool run_tool(const std::vector<std::string>& argv, std::string* output, std::string* err) {
  ProcessSpec spec;
  spec.argv = argv;
  spec.env = {"PATH=/usr/bin:/bin:/usr/local/bin", "LC_ALL=C"};
  spec.limit_s = 30;
  ProcessResult r;
  if (!run_process(spec, &r, err)) return false;
  if (!r.ok()) {
    *err = argv[0] + " " + argv.back() + " failed: " + r.output;
    return false;
  }
  *output = r.output;
  return true;
}

// nm lines: "                 U socket@GLIBC_2.2.5" or "0000000000001139 T kf_run".
std::vector<std::string> nm_names(const std::string& text) {
  std::vector<std::string> names;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::vector<std::string> f;
    std::string w;
    while (ls >> w) f.push_back(w);
    if (f.size() < 2) continue;
    std::string name = f.back();
    size_t at = name.find('@');
    if (at != std::string::npos) name = name.substr(0, at);
    names.push_back(name);
  }
  return names;
}

bool starts(const std::string& s, const char* p) {
  return s.rfind(p, 0) == 0;
}

}  // namespace

bool read_symbols(const std::string& lib, SymbolReport* out, std::string* err) {
  *out = SymbolReport{};
  std::string text;
  if (!run_tool({"nm", "-D", "--undefined-only", lib}, &text, err)) return false;
  out->undefined = nm_names(text);
  if (!run_tool({"nm", "-D", "--defined-only", lib}, &text, err)) return false;
  out->defined = nm_names(text);
  if (!run_tool({"readelf", "-d", lib}, &text, err)) return false;
  // " 0x0000000000000001 (NEEDED)             Shared library: [libc.so.6]"
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("(NEEDED)") == std::string::npos) continue;
    size_t a = line.find('['), b = line.rfind(']');
    if (a != std::string::npos && b != std::string::npos && b > a)
      out->needed.push_back(line.substr(a + 1, b - a - 1));
  }
  return true;
}

bool read_symbols_cached(const std::string& lib, SymbolReport* out, std::string* err) {
  const std::string kept = lib.substr(0, lib.rfind('/') + 1) + "symbols.json";
  nlohmann::json j;
  std::string ignored;
  if (read_json_file(kept, &j, &ignored)) {
    try {
      *out = j.get<SymbolReport>();
      return true;
    } catch (const nlohmann::json::exception&) {  // not ours, or older: read the library
    }
  }
  if (!read_symbols(lib, out, err)) return false;
  write_json_file(kept, *out, &ignored);  // a cache that cannot keep it reads again next time
  return true;
}

bool defines_symbol(const SymbolReport& syms, const std::string& name) {
  return std::find(syms.defined.begin(), syms.defined.end(), name) != syms.defined.end();
}

bool check_symbols(const SymbolReport& syms, Role role, const std::string& file_name,
                   std::vector<Finding>* findings) {
  size_t before = findings->size();
  static const std::set<std::string> escapes = {
      "system", "popen",   "fork",   "vfork",   "execve", "fexecve", "dlopen",   "dlmopen",
      "dlsym",  "dlvsym",  "socket", "connect", "bind",   "listen",  "accept",   "accept4",
      "ptrace", "syscall", "kill",   "killpg",  "setenv", "putenv",  "unsetenv", "clearenv"};
  for (auto& s : syms.undefined) {
    const char* why = nullptr;
    const char* instead = nullptr;
    if (starts(s, "MPI_") || starts(s, "PMPI_")) {
      why = "candidates may not call MPI";
      instead = "synchronize through comm.signals and peer memory instead";
    } else if (starts(s, "nccl") && role == Role::candidate) {
      why = "candidates may not call NCCL (only the baseline does)";
      instead = "move the data yourself through comm.peer pointers and signals instead";
    } else if (starts(s, "cuMulticast")) {
      why = "NVLink multicast is off on these machines (NCCL_NVLS_ENABLE=0)";
      instead = "use unicast peer loads/stores through comm.peer instead";
    } else if (escapes.count(s) || starts(s, "execv") || starts(s, "execl") ||
               starts(s, "posix_spawn")) {
      why =
          "a candidate may not start processes, load code, open sockets or change its "
          "environment";
      instead = "do all the work inside kf_run on the tensors and comm you are given instead";
    }
    if (why)
      findings->push_back({"symbol", file_name, 0, "the library imports " + s, why, instead});
  }
  static const char* allowed[] = {"libcudart.so", "libcuda.so", "libstdc++.so", "libm.so",
                                  "libgcc_s.so",  "libc.so",    "ld-linux",     "libpthread.so",
                                  "libdl.so",     "librt.so"};
  static const char* baseline_only[] = {"libnccl.so", "libcublas.so", "libcublasLt.so"};
  for (auto& n : syms.needed) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || starts(n, a);
    if (role == Role::baseline)
      for (const char* a : baseline_only) ok = ok || starts(n, a);
    if (!ok)
      findings->push_back(
          {"needed", file_name, 0, "the library needs " + n,
           "a candidate may link only the CUDA runtime and the C/C++ runtime",
           "remove the dependency and write the code in the one source file instead"});
  }
  return findings->size() == before;
}

}  // namespace sandbox
