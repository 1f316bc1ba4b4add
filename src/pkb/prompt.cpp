// pkb/prompt.cpp: assembling one PKB problem's prompt (prompt.h).
#include "pkb/prompt.h"

#include <fmt/core.h>

#include <fstream>
#include <regex>
#include <sstream>

namespace pkb {

namespace {

bool read_text(const std::string& path, std::string* out, std::string* err) {
  std::ifstream f(path);
  if (!f) {
    *err = "cannot read " + path + ": check the PKB checkout";
    return false;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return true;
}

size_t indent_of(const std::string& line) {
  size_t n = line.find_first_not_of(' ');
  return n == std::string::npos ? line.size() : n;
}

// Whether a line opens the branch for number: `if problem_id == N:`, `elif problem_id in
// [a, N, b]:` (spaces as written).
bool opens_branch(const std::string& line, int number) {
  static const std::regex eq(R"(^\s*(el)?if\s+problem_id\s*==\s*(\d+)\s*:)");
  static const std::regex in(R"(^\s*(el)?if\s+problem_id\s+in\s*[\[\(]([\d,\s]+)[\]\)]\s*:)");
  std::smatch m;
  if (std::regex_search(line, m, eq)) return std::stoi(m[2]) == number;
  if (!std::regex_search(line, m, in)) return false;
  std::string list = m[2];
  static const std::regex num(R"(\d+)");
  for (auto it = std::sregex_iterator(list.begin(), list.end(), num); it != std::sregex_iterator();
       ++it)
    if (std::stoi(it->str()) == number) return true;
  return false;
}

}  // namespace

std::string solution_signature(const std::string& source) {
  size_t at = 0;
  while ((at = source.find("def solution(", at)) != std::string::npos) {
    if (at == 0 || source[at - 1] == '\n') break;
    ++at;
  }
  if (at == std::string::npos) return "";
  int depth = 0;
  for (size_t i = at; i < source.size(); ++i) {
    if (source[i] == '(') ++depth;
    if (source[i] == ')') --depth;
    if (depth == 0 && source[i] == ':') {
      size_t nl = source.find('\n', i);
      if (nl == std::string::npos || source.find_first_not_of(" \t", i + 1) >= nl)
        return source.substr(at, i + 1 - at);
    }
  }
  return "";
}

std::string input_description(const std::string& inputs_source, int number) {
  std::istringstream in(inputs_source);
  std::string line, out;
  size_t indent = 0;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside) {
      if (opens_branch(line, number)) inside = true, indent = indent_of(line), out = line + "\n";
      continue;
    }
    bool blank = line.find_first_not_of(" \t") == std::string::npos;
    if (!blank && indent_of(line) <= indent) break;  // the next branch, or the function's end
    out += line + "\n";
  }
  while (!out.empty() && out.back() == '\n' && out.size() > 1 && out[out.size() - 2] == '\n')
    out.pop_back();
  return out;
}

bool build_prompt(const Checkout& c, const Problem& p, const PromptOptions& o, std::string* out,
                  std::string* err) {
  std::string ref, inputs;
  if (!read_text(p.reference, &ref, err)) return false;
  std::string sig = solution_signature(ref);
  if (sig.empty()) {
    *err = p.reference + " defines no top-level `def solution(...)`: is it a PKB reference?";
    return false;
  }
  std::string inputs_path = c.root + "/utils/input_output_tensors.py";
  if (!read_text(inputs_path, &inputs, err)) return false;
  std::string desc = input_description(inputs, p.number);
  std::string s;
  s += fmt::format("# ParallelKernelBench problem {} ({})\n\n", p.number, p.name);
  s += "Write a faster implementation of the reference below. It runs on every rank of a job "
       "with one process a GPU (as torchrun starts them) and torch.distributed initialized "
       "(NCCL).\n\n";
  s += "## Reference (reference/" + p.name + ".py)\n\n```python\n" + ref +
       (ref.empty() || ref.back() == '\n' ? "" : "\n") + "```\n\n";
  s += "## Signature to keep\n\n```python\n" + sig + "\n```\n\n";
  s += "## Inputs\n\n";
  if (desc.empty())
    s += "(utils/input_output_tensors.py has no branch for this problem: the inputs are as the "
         "reference's signature says.)\n\n";
  else
    s += "Each rank's arguments are made by create_input_tensor(rank, world_size, problem_id=" +
         std::to_string(p.number) + ", base_shape=(1024, 1024), dtype=" + o.dtype +
         ", trial) in PKB's utils/input_output_tensors.py, fresh random values per "
         "trial:\n\n```python\n" +
         desc + "```\n\n";
  s += "## Topology\n\n";
  if (o.world > 0) s += fmt::format("world size {}", o.world);
  if (!o.topology.empty()) s += (o.world > 0 ? ": " : "") + o.topology;
  if (o.world <= 0 && o.topology.empty()) s += "not detected";
  s += "\n\n";
  s += "## Correctness and timing\n\n"
       "Every rank's outputs are compared with the reference's on the same inputs, atol = rtol = "
       "1e-2 (after a cast to float32); shapes and dtypes must match exactly. An input the "
       "reference leaves unchanged must stay unchanged. Time is the slowest rank's, after "
       "warmup, alternating reference and candidate; speedup is reference over candidate. "
       "Timed calls' outputs are checked too: every call computes from its own inputs.\n\n";
  if (!o.docs.empty())
    s += "## CUDA\n\nWhere you write CUDA (a torch.utils.cpp_extension.load_inline extension, "
         "built once per source and cached), peers' memory is reachable through torch's "
         "symmetric memory (torch.distributed._symmetric_memory). kforge's notes on the "
         "mechanisms (peer loads and stores, signals, TMA, the copy engine) and what they cost "
         "follow; its <kf/...> headers and kf::Comm are not available to a PKB solution, so "
         "write what you need into the module.\n\n" +
         o.docs + (o.docs.back() == '\n' ? "\n" : "\n\n");
  s += "## Solution format\n\n"
       "Reply with one complete Python module in a ```python block. It must define `" +
       sig.substr(4, sig.find('(') - 4) +
       "(...)` with the signature above at top level, may import torch, torch.distributed and "
       "build CUDA extensions, and must not start processes or initialize the process group. "
       "It is PKB's own format: PKB's run_local.py evaluates the same file unchanged.\n";
  *out = std::move(s);
  return true;
}

}  // namespace pkb
