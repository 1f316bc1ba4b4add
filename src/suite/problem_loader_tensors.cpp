// suite/problem_loader_tensors.cpp: problem.json's tensors, its cost, busbw and workspace
// expressions, and the dry run that resolves the sizes at a few worlds (see
// problem_loader.h).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "sandbox/job.h"
#include "suite/instance.h"
#include "suite/problem_loader.h"

namespace suite {

bool ProblemLoader::tensors(const ojson& j) {
  const ojson& ts = j.at("tensors");
  if (!ts.is_array() || ts.empty()) return fail("tensors", "expected a non-empty list of tensors");
  std::set<std::string> seen;
  bool any_out = false;
  for (size_t i = 0; i < ts.size(); ++i) {
    std::string path = idx("tensors", i);
    const ojson& t = ts[i];
    if (!keys(t, path, {"name", "role", "dtype", "shape", "init"},
              {"name", "role", "dtype", "shape"}))
      return false;
    TensorSpec s;
    if (!string_at(t, "name", path, &s.name)) return false;
    if (!is_identifier(s.name))
      return fail(sub(path, "name"), "a tensor name must be letters, digits and underscores");
    if (!seen.insert(s.name).second)
      return fail(sub(path, "name"), fmt::format("tensor '{}' is declared twice", s.name));
    if (p_->find_param(s.name + "_numel") || p_->find_param(s.name + "_bytes"))
      return fail(sub(path, "name"), fmt::format("a parameter is called {0}_numel or {0}_bytes, "
                                                 "which this tensor defines; rename one",
                                                 s.name));
    if (!string_at(t, "role", path, &s.role)) return false;
    if (s.role != "in" && s.role != "out")
      return fail(sub(path, "role"),
                  fmt::format("\"{}\" is not a role; use \"in\" or \"out\"", s.role));
    any_out |= s.output();
    if (!string_at(t, "dtype", path, &s.dtype)) return false;
    if (s.dtype[0] == '$') {
      const ParamSpec* ps = p_->find_param(s.dtype.substr(1));
      if (!ps || ps->type != ParamType::dtype) {
        std::vector<std::string> dts;
        for (const ParamSpec& q : p_->params)
          if (q.type == ParamType::dtype) dts.push_back("$" + q.name);
        return fail(sub(path, "dtype"),
                    fmt::format("\"{}\" names no dtype parameter (dtype parameters: {}); "
                                "declare it in params with \"type\": \"dtype\"",
                                s.dtype, dts.empty() ? "none" : join(dts)));
      }
    } else {
      kf::DType dt;
      if (!sandbox::parse_dtype(s.dtype, &dt))
        return fail(sub(path, "dtype"),
                    fmt::format("\"{}\" is not a dtype; use one of fp32, fp16, bf16, fp64, "
                                "int32, int64, uint8, fp8_e4m3, fp8_e5m2, or \"$param\"",
                                s.dtype));
      s.dtype = sandbox::dtype_name(dt);
    }
    const ojson& sh = t.at("shape");
    std::string sp = sub(path, "shape");
    if (!sh.is_array())
      return fail(sp, fmt::format("expected a list of expressions, got {}", sh.type_name()));
    if (sh.size() > static_cast<size_t>(kf::kMaxDims))
      return fail(sp, fmt::format("at most {} dimensions (kf::kMaxDims)", kf::kMaxDims));
    for (size_t d = 0; d < sh.size(); ++d) {
      Expr e;
      if (!expr_at(sh[d], idx(sp, d), &e)) return false;
      s.shape.push_back(std::move(e));
    }
    if (s.output() && t.contains("init"))
      return fail(sub(path, "init"),
                  "outputs have no init (the sandbox poisons them); "
                  "remove it");
    if (!s.output()) {
      if (!t.contains("init"))
        return fail(path,
                    "an input needs \"init\", e.g. {\"dist\": \"uniform\", \"lo\": -1, "
                    "\"hi\": 1}");
      if (!init(t.at("init"), sub(path, "init"), &s)) return false;
    }
    p_->tensors.push_back(std::move(s));
  }
  if (!any_out) return fail("tensors", "no tensor has role \"out\"; a problem needs an output");
  return true;
}

bool ProblemLoader::init(const ojson& v, const std::string& path, TensorSpec* s) {
  if (!v.is_object() || !v.contains("dist") || !v.at("dist").is_string())
    return fail(path, "expected {\"dist\": \"uniform\"|\"normal\"|\"int\", ...}");
  s->has_init = true;
  s->init.dist = v.at("dist").get<std::string>();
  const char *ka, *kb;
  if (s->init.dist == "uniform" || s->init.dist == "int")
    ka = "lo", kb = "hi";
  else if (s->init.dist == "normal")
    ka = "mean", kb = "std";
  else
    return fail(sub(path, "dist"), fmt::format("\"{}\" is not a distribution; use uniform "
                                               "(lo, hi), normal (mean, std) or int (lo, hi)",
                                               s->init.dist));
  if (!keys(v, path, {"dist", ka, kb}, {"dist", ka, kb})) return false;
  return expr_at(v.at(ka), sub(path, ka), &s->init.a) &&
         expr_at(v.at(kb), sub(path, kb), &s->init.b);
}

// Constraints, cost, busbw and workspace_bytes; then the names every expression uses.
bool ProblemLoader::exprs(const ojson& j) {
  if (j.contains("constraints")) {
    const ojson& cs = j.at("constraints");
    if (!cs.is_array())
      return fail("constraints",
                  fmt::format("expected a list of boolean expressions, got {}", cs.type_name()));
    for (size_t i = 0; i < cs.size(); ++i) {
      if (!cs[i].is_string())
        return fail(idx("constraints", i), "expected a boolean expression as a string");
      Expr e;
      if (!expr_at(cs[i], idx("constraints", i), &e)) return false;
      p_->constraints.push_back(std::move(e));
    }
  }
  const ojson& c = j.at("cost");
  if (!keys(c, "cost", {"comm_bytes", "hbm_bytes", "flops"}, {"comm_bytes", "hbm_bytes", "flops"}))
    return false;
  if (!expr_at(c.at("comm_bytes"), "cost.comm_bytes", &p_->comm_bytes) ||
      !expr_at(c.at("hbm_bytes"), "cost.hbm_bytes", &p_->hbm_bytes) ||
      !expr_at(c.at("flops"), "cost.flops", &p_->flops))
    return false;
  if (j.contains("busbw")) {
    const ojson& b = j.at("busbw");
    if (!keys(b, "busbw", {"bytes", "factor"}, {"bytes", "factor"})) return false;
    if (!expr_at(b.at("bytes"), "busbw.bytes", &p_->busbw_bytes) ||
        !expr_at(b.at("factor"), "busbw.factor", &p_->busbw_factor))
      return false;
    p_->has_busbw = true;
  }
  if (j.contains("workspace_bytes") &&
      !expr_at(j.at("workspace_bytes"), "workspace_bytes", &p_->workspace_bytes))
    return false;

  // The names each context may use (problems/README.md, Expressions).
  std::set<std::string> base = p_->names(false), shape = base, cost = p_->names(true);
  shape.insert("rank");

  for (size_t i = 0; i < p_->tensors.size(); ++i) {
    const TensorSpec& t = p_->tensors[i];
    std::string path = idx("tensors", i);
    for (size_t d = 0; d < t.shape.size(); ++d)
      if (!names_known(t.shape[d], idx(sub(path, "shape"), d), shape, "shapes")) return false;
    if (t.has_init) {
      bool uni = t.init.dist != "normal";
      if (!names_known(t.init.a, sub(path, uni ? "init.lo" : "init.mean"), base, "init") ||
          !names_known(t.init.b, sub(path, uni ? "init.hi" : "init.std"), base, "init"))
        return false;
    }
  }
  for (size_t i = 0; i < p_->constraints.size(); ++i)
    if (!names_known(p_->constraints[i], idx("constraints", i), base, "constraints")) return false;
  if (!names_known(p_->comm_bytes, "cost.comm_bytes", cost, "cost") ||
      !names_known(p_->hbm_bytes, "cost.hbm_bytes", cost, "cost") ||
      !names_known(p_->flops, "cost.flops", cost, "cost"))
    return false;
  if (p_->has_busbw && (!names_known(p_->busbw_bytes, "busbw.bytes", cost, "busbw") ||
                        !names_known(p_->busbw_factor, "busbw.factor", cost, "busbw")))
    return false;
  if (!p_->workspace_bytes.empty() &&
      !names_known(p_->workspace_bytes, "workspace_bytes", base, "workspace_bytes"))
    return false;
  return true;
}

// Every dtype an output can take needs a tolerance, whatever a user overrides.
bool ProblemLoader::output_tolerances() {
  for (size_t i = 0; i < p_->tensors.size(); ++i) {
    const TensorSpec& t = p_->tensors[i];
    if (!t.output()) continue;
    std::vector<std::pair<std::string, std::string>> can;  // dtype, where it comes from
    if (t.dtype[0] == '$') {
      const ParamSpec* ps = p_->find_param(t.dtype.substr(1));
      if (ps->choices.empty()) can.emplace_back(ps->def.str, "params." + ps->name + ".default");
      for (size_t c = 0; c < ps->choices.size(); ++c)
        can.emplace_back(ps->choices[c].str, idx("params." + ps->name + ".choices", c));
    } else {
      can.emplace_back(t.dtype, idx("tensors", i) + ".dtype");
    }
    for (auto& [dt, from] : can)
      if (!p_->tolerance.count(dt)) {
        std::vector<std::string> have;
        for (auto& [k, v] : p_->tolerance) have.push_back(k);
        return fail("tolerance",
                    fmt::format("output '{}' can be {} ({}) but tolerance has no "
                                "{} entry (has: {}); add \"{}\": {{\"atol\": ..., "
                                "\"rtol\": ...}}",
                                t.name, dt, from, dt, have.empty() ? "none" : join(have), dt));
      }
  }
  return true;
}

// Resolves small and full at the smallest worlds the constraints allow, so that a shape
// that is not an integer or a cost that divides by zero shows up now, not in a run.
bool ProblemLoader::dry_run() {
  for (const char* size : {"small", "full"}) {
    int ok = 0;
    for (int w = p_->world_min; w <= std::min(p_->world_max, p_->world_min + 7) && ok < 2; ++w) {
      Instance inst;
      std::string e;
      bool unsatisfied = false;
      if (resolve_instance(*p_, w, size, {}, &inst, &e, &unsatisfied)) {
        ++ok;
      } else if (!unsatisfied) {
        *err_ = e + " [found by load_problem's dry run]";
        return false;
      }
    }
  }
  return true;
}

}  // namespace suite
