// sandbox/static_check.cpp: a small lexer that blanks comments and literals, then a
// scan of identifiers and #include lines against the rules below.
#include "static_check.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <regex>
#include <set>

namespace sandbox {

std::string Finding::render() const {
  std::string s = file;
  if (line > 0) s += ":" + std::to_string(line);
  s += ": " + what;
  if (!why.empty()) s += ": " + why;
  if (!instead.empty()) s += "; " + instead;
  return s;
}

bool multicast_allowed_by_env() {
  const char* v = getenv("NCCL_NVLS_ENABLE");
  return v && *v && std::string(v) != "0";
}

StaticPolicy default_static_policy() {
  StaticPolicy p;
  p.allow_multicast = multicast_allowed_by_env();
  return p;
}

namespace {

bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// The start of the run of identifier/number characters (and '.') ending before i.
size_t run_start(const std::string& s, size_t i) {
  while (i > 0 && (ident_char(s[i - 1]) || s[i - 1] == '.')) --i;
  return i;
}

}  // namespace

std::string strip_comments_and_strings(const std::string& src, bool keep_strings) {
  std::string out = src;
  size_t n = src.size();
  auto blank = [&](size_t from, size_t to) {
    for (size_t k = from; k < to && k < n; ++k)
      if (out[k] != '\n') out[k] = ' ';
  };
  size_t i = 0;
  while (i < n) {
    char c = src[i];
    if (c == '/' && i + 1 < n && src[i + 1] == '/') {
      size_t j = i;
      // A backslash before the newline continues a line comment.
      while (j < n && !(src[j] == '\n' && !(j > 0 && src[j - 1] == '\\'))) ++j;
      blank(i, j);
      i = j;
    } else if (c == '/' && i + 1 < n && src[i + 1] == '*') {
      size_t j = src.find("*/", i + 2);
      j = j == std::string::npos ? n : j + 2;
      blank(i, j);
      i = j;
    } else if (c == '"') {
      size_t rs = run_start(src, i);
      std::string prefix = src.substr(rs, i - rs);
      bool raw =
          !prefix.empty() && prefix.back() == 'R' &&
          (prefix == "R" || prefix == "u8R" || prefix == "uR" || prefix == "UR" || prefix == "LR");
      size_t j;
      if (raw) {
        size_t open = src.find('(', i + 1);
        if (open == std::string::npos) {
          j = n;
        } else {
          std::string close = ")" + src.substr(i + 1, open - i - 1) + "\"";
          j = src.find(close, open + 1);
          j = j == std::string::npos ? n : j + close.size();
        }
      } else {
        j = i + 1;
        while (j < n && src[j] != '"' && src[j] != '\n') j += src[j] == '\\' ? 2 : 1;
        j = std::min(n, j + 1);
      }
      if (!keep_strings) blank(i, j);
      i = j;
    } else if (c == '\'') {
      size_t rs = run_start(src, i);
      // 1'000'000: a digit separator inside a number, not a character literal.
      if (rs < i && std::isdigit(static_cast<unsigned char>(src[rs]))) {
        ++i;
        continue;
      }
      size_t j = i + 1;
      while (j < n && src[j] != '\'' && src[j] != '\n') j += src[j] == '\\' ? 2 : 1;
      j = std::min(n, j + 1);
      if (!keep_strings) blank(i, j);
      i = j;
    } else {
      ++i;
    }
  }
  return out;
}

namespace {

struct Rule {
  const char* rule;
  const char* why;
  const char* instead;
};

const Rule kMpi{"mpi", "candidates may not call MPI",
                "synchronize through comm.signals and peer memory instead"};
const Rule kNccl{"nccl", "candidates may not call NCCL (only the baseline does)",
                 "move the data yourself through comm.peer pointers and signals instead"};
const Rule kMulticast{"multicast", "NVLink multicast is off on these machines (NCCL_NVLS_ENABLE=0)",
                      "use unicast peer loads/stores through comm.peer instead"};
const Rule kEscape{"escape",
                   "a candidate may not start processes, load code, open sockets or "
                   "change its environment",
                   "do all the work inside kf_run on the tensors and comm you are given instead"};
const Rule kCtor{"escape", "code that runs at load time escapes the sandbox's phases",
                 "do one-time work in kf_setup instead"};
const Rule kStream{"timing",
                   "work outside comm.stream() is not ordered with the harness's calls (the "
                   "timer counts it up to the device going idle and flags it)",
                   "enqueue everything on comm.stream() instead"};
const Rule kDevice{"timing", "the sandbox binds each rank's device",
                   "use comm.device and the current device instead"};
const Rule kReset{"timing", "cudaDeviceReset destroys the sandbox's context and symmetric heap",
                  "free only what you allocated instead"};
const Rule kL2{"timing", "persisting-L2 controls outlive a call and skew later timed iterations",
               "rely on ordinary caching instead"};
const Rule kInclude{"include", "includes must name standard, CUDA or <kf/...> headers",
                    "paste what you need into the one source file instead"};

struct Match {
  int line;
  std::string what;
  const Rule* rule;
};

// The rule an identifier breaks, or nullptr. `call` says a '(' follows it.
const Rule* ident_rule(const std::string& id, bool call, bool member, Role role,
                       const StaticPolicy& pol) {
  std::string low = id;
  std::transform(low.begin(), low.end(), low.begin(), ::tolower);
  if (id.rfind("MPI_", 0) == 0 || id.rfind("PMPI_", 0) == 0) return &kMpi;
  if (low.rfind("nccl", 0) == 0 && role == Role::candidate) return &kNccl;
  if ((id.rfind("cuMulticast", 0) == 0 || id.rfind("cudaMulticast", 0) == 0) &&
      !pol.allow_multicast)
    return &kMulticast;
  if (id == "cudaStreamNonBlocking" || id == "cudaStreamPerThread" ||
      id == "cudaStreamCreateWithPriority" || id == "CUDA_API_PER_THREAD_DEFAULT_STREAM")
    return &kStream;
  if (id == "cudaSetDevice") return &kDevice;
  if (id == "cudaDeviceReset") return &kReset;
  if (id == "cudaLimitPersistingL2CacheSize" || id == "accessPolicyWindow" ||
      id == "cudaStreamSetAttribute" || id == "cudaCtxResetPersistingL2Cache" ||
      id == "cudaStreamAttributeAccessPolicyWindow")
    return &kL2;
  static const std::set<std::string> escapes = {
      "system",  "popen",   "fork",    "vfork",   "execl",  "execlp", "execle",   "execv",
      "execvp",  "execvpe", "execve",  "fexecve", "dlopen", "dlsym",  "dlmopen",  "socket",
      "connect", "ptrace",  "syscall", "kill",    "setenv", "putenv", "unsetenv", "clearenv"};
  if (call && !member && (escapes.count(id) || id.rfind("posix_spawn", 0) == 0)) return &kEscape;
  return nullptr;
}

const std::regex& include_regex() {
  static const std::regex include(R"(^\s*#\s*include\s*([<"])([^>"]*)[>"])");
  return include;
}

// The numbers of the lines that are #include directives (found where string literals are
// kept: the path is one).
std::set<int> include_lines(const std::string& with_strings) {
  std::set<int> lines;
  int ln = 1;
  size_t start = 0;
  while (start <= with_strings.size()) {
    size_t end = with_strings.find('\n', start);
    if (end == std::string::npos) end = with_strings.size();
    if (std::regex_search(with_strings.substr(start, end - start), include_regex()))
      lines.insert(ln);
    start = end + 1;
    ++ln;
  }
  return lines;
}

// The identifier rules over the code without comments and literals (`code`; the literals
// of an asm statement are read from `with_strings`). Returns whether kf_run appears.
bool scan_identifiers(const std::string& code, const std::string& with_strings, Role role,
                      const StaticPolicy& pol, std::vector<Match>* matches) {
  const std::set<int> includes = include_lines(with_strings);
  bool has_kf_run = false;
  int line = 1;
  std::set<std::pair<int, std::string>> seen;
  for (size_t i = 0; i < code.size();) {
    char c = code[i];
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (!ident_char(c)) {
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < code.size() && ident_char(code[j])) ++j;
    if (std::isdigit(static_cast<unsigned char>(c))) {  // numbers (0x1e, 1.5e3f) skipped whole
      i = j;
      continue;
    }
    std::string id = code.substr(i, j - i);
    size_t k = j;
    while (k < code.size() && (code[k] == ' ' || code[k] == '\t')) ++k;
    bool call = k < code.size() && code[k] == '(';
    size_t b = i;
    while (b > 0 && (code[b - 1] == ' ' || code[b - 1] == '\t')) --b;
    bool member =
        b > 0 && (code[b - 1] == '.' || (b > 1 && code[b - 1] == '>' && code[b - 2] == '-'));
    if (id == "include" && includes.count(line)) {
      // The path of an #include is checked by scan_lines, as a path.
      while (j < code.size() && code[j] != '\n') ++j;
      i = j;
      continue;
    }
    if (id == "kf_run") has_kf_run = true;
    if (id == "asm" || id == "__asm__" || id == "__asm") {
      // A raw system call in inline assembly imports no symbol: look inside the strings.
      size_t end = code.find(';', j);
      std::string body =
          with_strings.substr(j, end == std::string::npos ? std::string::npos : end - j);
      for (const char* insn : {"syscall", "sysenter", "int $0x80", "int 0x80"})
        if (body.find(insn) != std::string::npos && seen.insert({line, insn}).second)
          matches->push_back(
              {line, std::string("uses the ") + insn + " instruction in asm", &kEscape});
    }
    if (const Rule* r = ident_rule(id, call, member, role, pol)) {
      if (seen.insert({line, id}).second) matches->push_back({line, "uses " + id, r});
    }
    i = j;
  }
  return has_kf_run;
}

// The rule an #include of `path` (opened by `open`, '<' or '"') breaks, or nullptr; *shown
// is the directive as written.
const Rule* include_rule(const std::string& open, const std::string& path, Role role,
                         std::string* shown) {
  std::string low = path;
  std::transform(low.begin(), low.end(), low.begin(), ::tolower);
  *shown = "#include " + open + path + (open == "<" ? ">" : "\"");
  bool dotdot = path == ".." || path.rfind("../", 0) == 0 ||
                path.find("/../") != std::string::npos ||
                (path.size() >= 3 && path.compare(path.size() - 3, 3, "/..") == 0);
  if (!path.empty() && path[0] == '/') {
    *shown += " (an absolute path)";
    return &kInclude;
  }
  if (dotdot) {
    *shown += " (a path with ..)";
    return &kInclude;
  }
  if (low == "mpi.h" || low == "mpi_ext.h" || low == "mpi.hpp" || low == "mpicxx.h" ||
      low.find("/mpi.h") != std::string::npos)
    return &kMpi;
  if (low.find("nccl") != std::string::npos && role == Role::candidate) return &kNccl;
  return nullptr;
}

// Patterns that span tokens, matched line by line on the code without literals; #include
// lines where string literals are kept (the path is one).
void scan_lines(const std::string& code, const std::string& with_strings, Role role,
                std::vector<Match>* matches) {
  static const std::regex ctor(
      R"(__attribute__\s*\(\(\s*(constructor|destructor)|\[\[\s*gnu\s*::\s*(constructor|destructor))");
  static const std::regex default_stream(R"(--default-stream)");
  size_t start = 0;
  int ln = 1;
  while (start <= code.size()) {
    size_t end = code.find('\n', start);
    if (end == std::string::npos) end = code.size();
    std::string cl = code.substr(start, end - start);
    std::string sl = with_strings.substr(start, end - start);
    std::smatch m;
    if (std::regex_search(cl, m, ctor))
      matches->push_back(
          {ln, "uses __attribute__((" + std::string(m[1].matched ? m[1] : m[2]) + "))", &kCtor});
    if (std::regex_search(cl, default_stream))
      matches->push_back({ln, "sets --default-stream", &kStream});
    std::string shown;
    if (std::regex_search(sl, m, include_regex()))
      if (const Rule* r = include_rule(m[1], m[2], role, &shown))
        matches->push_back({ln, shown, r});
    start = end + 1;
    ++ln;
  }
}

}  // namespace

bool static_check(const std::string& source, Role role, const StaticPolicy& pol,
                  std::vector<Finding>* findings) {
  findings->clear();
  if (source.size() > pol.max_bytes) {
    findings->push_back({"size", pol.file_name, 0, "is " + std::to_string(source.size()) + " bytes",
                         "a source may be at most " + std::to_string(pol.max_bytes) + " bytes",
                         "keep one kernel file small: drop generated tables and dead code"});
    return false;
  }
  std::vector<Match> matches;
  std::string code = strip_comments_and_strings(source);
  std::string with_strings = strip_comments_and_strings(source, true);
  bool has_kf_run = scan_identifiers(code, with_strings, role, pol, &matches);
  scan_lines(code, with_strings, role, &matches);
  std::stable_sort(matches.begin(), matches.end(),
                   [](const Match& a, const Match& b) { return a.line < b.line; });
  for (auto& m : matches)
    findings->push_back(
        {m.rule->rule, pol.file_name, m.line, m.what, m.rule->why, m.rule->instead});
  if (!has_kf_run)
    findings->push_back({"entry", pol.file_name, 0, "defines no kf_run",
                         "every candidate exports extern \"C\" int kf_run(kf::Comm&, kf::Tensors&)",
                         "define it (and optionally kf_setup) as in the examples"});
  return findings->empty();
}

}  // namespace sandbox
