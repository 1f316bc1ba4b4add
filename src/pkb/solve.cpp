// pkb/solve.cpp: see solve.h.
#include "pkb/solve.h"

#include <sstream>
#include <vector>

#include "agent/template.h"
#include "pkb/warm.h"
#include "sandbox/evaluate.h"

namespace pkb {

namespace {

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
  bool unclosed = false;
  std::vector<agent::Block> blocks = agent::fenced_blocks(text, &unclosed);
  bool python = false;
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    bool tagged = it->tag.empty() || it->tag == "python" || it->tag == "py" || it->tag == "python3";
    python |= tagged;
    if (tagged && defines_solution(it->body)) {
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
  if (spec.warm) {
    // One interpreter for the solve's candidates, in a folder of its own under evals/.
    std::string root = sandbox::make_eval_dir(evals);
    if (root.empty()) return (*err = "cannot create a folder under " + evals, false);
    base.warm = std::make_shared<WarmInterpreter>(root);
    evals = root;
    // Up while the model writes its first reply. Where it cannot start, the first eval
    // says why in its verdict and runs cold.
    std::string not_now;
    base.warm->prestart(base, &not_now);
  }
  f.evaluate = [base, evals](const std::string& file, sandbox::Verdict* v, std::string* e,
                             agent::SetupFault* fault) {
    EvalSpec s = base;
    s.solution = file;
    s.work_dir = sandbox::make_eval_dir(evals);
    if (s.work_dir.empty()) return (*e = "cannot create a run folder under " + evals, false);
    return evaluate(s, v, e, fault);
  };
  *out = std::move(f);
  return true;
}

}  // namespace pkb
