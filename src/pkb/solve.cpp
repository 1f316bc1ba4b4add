// pkb/solve.cpp: see solve.h.
#include "pkb/solve.h"

#include <sstream>
#include <vector>

#include "agent/template.h"
#include "sandbox/evaluate.h"

namespace pkb {

namespace {

struct Block {
  std::string tag, body;
  bool closed = false;
};

// Fenced blocks in order (the info string's first word as tag, lower-cased).
std::vector<Block> blocks_of(const std::string& text) {
  std::vector<Block> out;
  std::istringstream in(text);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t s = line.find_first_not_of(" \t");
    std::string t = s == std::string::npos ? "" : line.substr(s);
    if (!inside && t.rfind("```", 0) == 0) {
      std::string info = t.substr(3);
      std::istringstream w(info);
      Block b;
      w >> b.tag;
      for (char& c : b.tag) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      out.push_back(b);
      inside = true;
    } else if (inside && t.find_first_not_of('`') == std::string::npos && t.size() >= 3) {
      out.back().closed = true;
      inside = false;
    } else if (inside) {
      out.back().body += line + "\n";
    }
  }
  return out;
}

bool defines_solution(const std::string& body) {
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("def solution(", 0) == 0 || line.rfind("def solution (", 0) == 0) return true;
  return false;
}

const char* kFormat =
    "Answer with the complete Python module in one fenced code block tagged python, e.g.\n"
    "```python\nimport torch\nimport torch.distributed as dist\n\ndef solution(...):\n    "
    "...\n```\nwith `def solution(` at top level and the reference's signature. The last such "
    "block in your reply is taken as the whole file.";

}  // namespace

agent::ParsedReply parse_solution_reply(const std::string& text) {
  agent::ParsedReply r;
  std::vector<Block> blocks = blocks_of(text);
  bool python = false, unclosed = false;
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    bool tagged = it->tag.empty() || it->tag == "python" || it->tag == "py" || it->tag == "python3";
    python |= tagged;
    unclosed |= !it->closed;
    if (tagged && it->closed && defines_solution(it->body)) {
      r.ok = true;
      r.code = it->body;
      return r;
    }
  }
  if (unclosed)
    r.error =
        "Your reply has a code block that is never closed with ``` (was it cut off at the output "
        "limit? Then write a shorter module). ";
  else if (blocks.empty())
    r.error = "Your reply has no fenced code block. ";
  else if (!python)
    r.error = "No code block in your reply is tagged python. ";
  else
    r.error = "No python block in your reply defines `def solution(` at top level. ";
  r.error += kFormat;
  return r;
}

bool make_foreign_suite(const SolveSpec& spec, agent::ForeignSuite* out, std::string* err) {
  agent::ForeignSuite f;
  f.suite = "pkb:" + spec.checkout.root;
  f.problem = spec.eval.problem.name;
  f.extension = ".py";
  if (!agent::read_text_file(spec.prompts_dir + "/system.md", &f.system_prompt, err) ||
      !build_prompt(spec.checkout, spec.eval.problem, spec.prompt, &f.task_prompt, err))
    return false;
  f.parse = parse_solution_reply;
  EvalSpec base = spec.eval;
  std::string evals = spec.evals_dir;
  f.evaluate = [base, evals](const std::string& file, sandbox::Verdict* v, std::string* e) {
    EvalSpec s = base;
    s.solution = file;
    s.work_dir = sandbox::make_eval_dir(evals);
    if (s.work_dir.empty()) return (*e = "cannot create a run folder under " + evals, false);
    return evaluate(s, v, e);
  };
  *out = std::move(f);
  return true;
}

}  // namespace pkb
