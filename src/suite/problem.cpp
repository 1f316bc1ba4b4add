// suite/problem.cpp: problem.json -> suite::Problem, with every check a spec author
// needs to hear about before a run does (see problem.h).
#include "suite/problem.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "sandbox/job.h"
#include "suite/instance.h"
#include "suite/spec_json.h"

namespace suite {

const char* const kCategories[6] = {"collective",      "tensor-parallel", "sequence-parallel",
                                    "expert-parallel", "data-parallel",   "other"};

const ParamSpec* Problem::find_param(const std::string& name) const {
  for (const ParamSpec& s : params)
    if (s.name == name) return &s;
  return nullptr;
}

const SizeSpec* Problem::find_size(const std::string& name) const {
  for (const SizeSpec& s : sizes)
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<std::string> Problem::size_names() const {
  std::vector<std::string> v;
  for (const SizeSpec& s : sizes) v.push_back(s.name);
  return v;
}

std::set<std::string> Problem::names(bool cost) const {
  std::set<std::string> known = {"world"};
  for (const ParamSpec& ps : params)
    if (ps.numeric()) known.insert(ps.name);
  if (const ParamSpec* d = find_param("dtype"); d && d->type == "dtype") known.insert("dsize");
  if (cost)
    for (const TensorSpec& t : tensors) known.insert({t.name + "_numel", t.name + "_bytes"});
  return known;
}

namespace {

namespace fs = std::filesystem;

// Short names for spec_json.h's path helpers, as the loader below uses them everywhere.
std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  return spec_join(v, sep);
}
std::string sub(const std::string& path, const std::string& key) {
  return spec_sub(path, key);
}
std::string idx(const std::string& path, size_t i) {
  return spec_idx(path, i);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

class Loader : public SpecReader {
 public:
  Loader(Problem* p, std::string* err) : SpecReader(p->file, err), p_(p), err_(err) {}

  bool load(const ojson& j) {
    return top(j) && params(j) && world(j) && tensors(j) && sizes(j) && tolerance(j) &&
           exprs(j) && output_tolerances() && dry_run();
  }

 private:
  // Every name `e` mentions must be in `known`, with a hint for the usual mistakes.
  bool names_known(const Expr& e, const std::string& path, const std::set<std::string>& known,
                   const char* where) {
    return SpecReader::names_known(e, path, known, where, [&](const std::string& n) {
      if (n == "rank") return std::string("; `rank` may only be used in tensor shapes");
      if (ends_with(n, "_numel") || ends_with(n, "_bytes"))
        return std::string(
            "; <tensor>_numel and <tensor>_bytes may only be used in cost and busbw");
      if (p_->find_param(n) && !p_->find_param(n)->numeric())
        return fmt::format("; '{}' is a {} parameter, and only numeric ones have a value", n,
                           p_->find_param(n)->type);
      return std::string();
    });
  }

  bool top(const ojson& j) {
    if (!keys(
            j, "",
            {"name", "category", "mirrors", "description", "params", "sizes", "world",
             "constraints", "tensors", "tolerance", "cost", "busbw", "workspace_bytes", "default"},
            {"name", "category", "description", "sizes", "world", "tensors", "tolerance", "cost"}))
      return false;
    if (!string_at(j, "name", "", &p_->name)) return false;
    std::string folder = fs::path(p_->dir).lexically_normal().filename().string();
    if (folder.empty())
      folder = fs::path(p_->dir).lexically_normal().parent_path().filename().string();
    if (p_->name != folder)
      return fail("name", fmt::format("is \"{}\" but the folder is \"{}\"; the name must equal "
                                      "the folder's name (rename one of them)",
                                      p_->name, folder));
    if (!is_identifier(p_->name))
      return fail("name", "must be letters, digits and underscores (it names a C++ oracle)");
    if (!string_at(j, "category", "", &p_->category)) return false;
    bool cat_ok = false;
    std::vector<std::string> cats;
    for (const char* c : kCategories) {
      cats.push_back(c);
      if (p_->category == c) cat_ok = true;
    }
    if (!cat_ok)
      return fail("category", fmt::format("\"{}\" is not a category; use one of: {}",
                                          p_->category, join(cats)));
    if (!string_at(j, "description", "", &p_->description)) return false;
    if (j.contains("default")) {
      if (!j.at("default").is_boolean())
        return fail("default",
                    "expected true or false (true: `kforge solve` without a problem "
                    "solves this one)");
      p_->is_default = j.at("default").get<bool>();
    }
    if (j.contains("mirrors") && !j.at("mirrors").is_null()) {
      const ojson& m = j.at("mirrors");
      if (!keys(m, "mirrors", {"suite", "id", "name"}, {"suite"})) return false;
      if (!string_at(m, "suite", "mirrors", &p_->mirrors.suite)) return false;
      if (m.contains("id") && !int_at(m.at("id"), "mirrors.id", &p_->mirrors.id)) return false;
      if (m.contains("name") && !string_at(m, "name", "mirrors", &p_->mirrors.name)) return false;
    }
    return true;
  }

  // A value for parameter `ps` (a default, a choice or a size's setting).
  bool value_for(const ParamSpec& ps, const ojson& v, const std::string& path, Value* out) {
    if (ps.numeric()) {
      double x;
      if (v.is_number()) {
        x = v.get<double>();
      } else if (v.is_string()) {  // a constant expression such as "2^20"
        std::string e;
        if (!eval_expr(v.get<std::string>(), {}, &x, &e))
          return fail(path, e + fmt::format("; {} is {}: give a number", ps.name, ps.type));
      } else {
        return fail(path, fmt::format("{} is {}: expected a number, got {}", ps.name, ps.type,
                                      v.type_name()));
      }
      if (ps.type == "int" && !is_exact_integer(x))
        return fail(path, fmt::format("{} is int but {} is not an integer", ps.name,
                                      format_number(x)));
      out->is_string = false;
      out->num = x;
      return true;
    }
    if (!v.is_string())
      return fail(path, fmt::format("{} is {}: expected a string, got {}", ps.name, ps.type,
                                    v.type_name()));
    out->is_string = true;
    out->str = v.get<std::string>();
    if (ps.type == "dtype") {
      kf::DType t;
      if (!sandbox::parse_dtype(out->str, &t))
        return fail(path, fmt::format("\"{}\" is not a dtype; use one of fp32, fp16, bf16, fp64, "
                                      "int32, int64, uint8, fp8_e4m3, fp8_e5m2", out->str));
      out->str = sandbox::dtype_name(t);
    }
    return true;
  }

  bool in_choices(const ParamSpec& ps, const Value& v, const std::string& path) {
    if (ps.choices.empty()) return true;
    std::vector<std::string> names;
    for (const Value& c : ps.choices) {
      if (c.is_string ? c.str == v.str : c.num == v.num) return true;
      names.push_back(c.is_string ? c.str : format_number(c.num));
    }
    return fail(path, fmt::format("{} is not one of the choices of {}: {}",
                                  v.is_string ? v.str : format_number(v.num), ps.name,
                                  join(names)));
  }

  bool params(const ojson& j) {
    if (!j.contains("params")) return true;
    const ojson& ps = j.at("params");
    if (!ps.is_object())
      return fail("params", fmt::format("expected an object of parameters, got {}",
                                        ps.type_name()));
    static const std::set<std::string> reserved = {"world", "rank",  "dsize", "min",  "max",
                                                   "ceil_div", "floor", "ceil", "log2"};
    for (auto it = ps.begin(); it != ps.end(); ++it) {
      std::string path = sub("params", it.key());
      ParamSpec s;
      s.name = it.key();
      if (!is_identifier(s.name))
        return fail(path, "a parameter name must be letters, digits and underscores");
      if (reserved.count(s.name))
        return fail(path, fmt::format("'{}' is reserved in expressions; rename the parameter",
                                      s.name));
      const ojson& v = it.value();
      if (!keys(v, path, {"type", "default", "choices", "doc"}, {"type", "default"})) return false;
      if (!string_at(v, "type", path, &s.type)) return false;
      if (s.type != "int" && s.type != "float" && s.type != "dtype" && s.type != "string")
        return fail(sub(path, "type"), fmt::format("\"{}\" is not a parameter type; use int, "
                                                   "float, dtype or string", s.type));
      if (v.contains("doc") && !string_at(v, "doc", path, &s.doc, false)) return false;
      if (v.contains("choices")) {
        const ojson& cs = v.at("choices");
        std::string cp = sub(path, "choices");
        if (!cs.is_array() || cs.empty())
          return fail(cp, "expected a non-empty list of allowed values");
        for (size_t i = 0; i < cs.size(); ++i) {
          Value c;
          if (!value_for(s, cs[i], idx(cp, i), &c)) return false;
          s.choices.push_back(c);
        }
      }
      if (!value_for(s, v.at("default"), sub(path, "default"), &s.def)) return false;
      if (!in_choices(s, s.def, sub(path, "default"))) return false;
      p_->params.push_back(std::move(s));
    }
    return true;
  }

  bool world(const ojson& j) {
    const ojson& w = j.at("world");
    if (!keys(w, "world", {"min", "max"}, {"min", "max"})) return false;
    if (!int_at(w.at("min"), "world.min", &p_->world_min)) return false;
    if (!int_at(w.at("max"), "world.max", &p_->world_max)) return false;
    if (p_->world_min < 1) return fail("world.min", "must be at least 1");
    if (p_->world_max < p_->world_min) return fail("world.max", "must be at least world.min");
    if (p_->world_max > kf::kMaxWorld)
      return fail("world.max", fmt::format("must be at most {} (kf::kMaxWorld)", kf::kMaxWorld));
    return true;
  }

  bool tensors(const ojson& j) {
    const ojson& ts = j.at("tensors");
    if (!ts.is_array() || ts.empty())
      return fail("tensors", "expected a non-empty list of tensors");
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
                                                   "which this tensor defines; rename one", s.name));
      if (!string_at(t, "role", path, &s.role)) return false;
      if (s.role != "in" && s.role != "out")
        return fail(sub(path, "role"), fmt::format("\"{}\" is not a role; use \"in\" or \"out\"",
                                                   s.role));
      any_out |= s.output();
      if (!string_at(t, "dtype", path, &s.dtype)) return false;
      if (s.dtype[0] == '$') {
        const ParamSpec* ps = p_->find_param(s.dtype.substr(1));
        if (!ps || ps->type != "dtype") {
          std::vector<std::string> dts;
          for (const ParamSpec& q : p_->params)
            if (q.type == "dtype") dts.push_back("$" + q.name);
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
        return fail(sub(path, "init"), "outputs have no init (the sandbox poisons them); "
                                       "remove it");
      if (!s.output()) {
        if (!t.contains("init"))
          return fail(path, "an input needs \"init\", e.g. {\"dist\": \"uniform\", \"lo\": -1, "
                            "\"hi\": 1}");
        if (!init(t.at("init"), sub(path, "init"), &s)) return false;
      }
      p_->tensors.push_back(std::move(s));
    }
    if (!any_out) return fail("tensors", "no tensor has role \"out\"; a problem needs an output");
    return true;
  }

  bool init(const ojson& v, const std::string& path, TensorSpec* s) {
    if (!v.is_object() || !v.contains("dist") || !v.at("dist").is_string())
      return fail(path, "expected {\"dist\": \"uniform\"|\"normal\"|\"int\", ...}");
    s->has_init = true;
    s->init.dist = v.at("dist").get<std::string>();
    const char *ka, *kb;
    if (s->init.dist == "uniform" || s->init.dist == "int") ka = "lo", kb = "hi";
    else if (s->init.dist == "normal") ka = "mean", kb = "std";
    else
      return fail(sub(path, "dist"), fmt::format("\"{}\" is not a distribution; use uniform "
                                                 "(lo, hi), normal (mean, std) or int (lo, hi)",
                                                 s->init.dist));
    if (!keys(v, path, {"dist", ka, kb}, {"dist", ka, kb})) return false;
    return expr_at(v.at(ka), sub(path, ka), &s->init.a) &&
           expr_at(v.at(kb), sub(path, kb), &s->init.b);
  }

  bool sizes(const ojson& j) {
    const ojson& ss = j.at("sizes");
    if (!ss.is_object())
      return fail("sizes", fmt::format("expected an object of named sizes, got {}",
                                       ss.type_name()));
    std::vector<std::string> declared;
    for (const ParamSpec& ps : p_->params) declared.push_back(ps.name);
    for (auto it = ss.begin(); it != ss.end(); ++it) {
      std::string path = sub("sizes", it.key());
      SizeSpec s;
      s.name = it.key();
      const ojson& v = it.value();
      if (!v.is_object())
        return fail(path, fmt::format("expected an object of parameter values, got {}",
                                      v.type_name()));
      for (auto kv = v.begin(); kv != v.end(); ++kv) {
        std::string kp = sub(path, kv.key());
        const ParamSpec* ps = p_->find_param(kv.key());
        if (!ps)
          return fail(kp, fmt::format("'{}' is not a declared parameter (declared: {}); declare "
                                      "it in params or fix the name", kv.key(),
                                      declared.empty() ? "none" : join(declared)));
        Value val;
        if (!value_for(*ps, kv.value(), kp, &val) || !in_choices(*ps, val, kp)) return false;
        s.set.emplace_back(kv.key(), val);
      }
      p_->sizes.push_back(std::move(s));
    }
    for (const char* req : {"small", "full"})
      if (!p_->find_size(req))
        return fail("sizes", fmt::format("missing the required size '{}' (small is checked "
                                         "against the oracle, full is timed); add it", req));
    return true;
  }

  bool tolerance(const ojson& j) {
    const ojson& ts = j.at("tolerance");
    if (!ts.is_object())
      return fail("tolerance", fmt::format("expected an object keyed by dtype name, got {}",
                                           ts.type_name()));
    for (auto it = ts.begin(); it != ts.end(); ++it) {
      std::string path = sub("tolerance", it.key());
      kf::DType dt;
      if (!sandbox::parse_dtype(it.key(), &dt))
        return fail(path, fmt::format("\"{}\" is not a dtype name; key tolerances by fp32, bf16, "
                                      "fp16, ...", it.key()));
      std::string name = sandbox::dtype_name(dt);
      if (p_->tolerance.count(name))
        return fail(path, fmt::format("a second entry for {}; keep one", name));
      if (!keys(it.value(), path, {"atol", "rtol"}, {"atol", "rtol"})) return false;
      Tolerance t;
      if (!number_at(it.value().at("atol"), sub(path, "atol"), &t.atol) ||
          !number_at(it.value().at("rtol"), sub(path, "rtol"), &t.rtol))
        return false;
      if (t.atol < 0 || t.rtol < 0) return fail(path, "atol and rtol must be non-negative");
      p_->tolerance[name] = t;
    }
    return true;
  }

  // Constraints, cost, busbw and workspace_bytes; then the names every expression uses.
  bool exprs(const ojson& j) {
    if (j.contains("constraints")) {
      const ojson& cs = j.at("constraints");
      if (!cs.is_array())
        return fail("constraints", fmt::format("expected a list of boolean expressions, got {}",
                                               cs.type_name()));
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
      if (!names_known(p_->constraints[i], idx("constraints", i), base, "constraints"))
        return false;
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
  bool output_tolerances() {
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
          return fail("tolerance", fmt::format("output '{}' can be {} ({}) but tolerance has no "
                                               "{} entry (has: {}); add \"{}\": {{\"atol\": ..., "
                                               "\"rtol\": ...}}",
                                               t.name, dt, from, dt,
                                               have.empty() ? "none" : join(have), dt));
        }
    }
    return true;
  }

  // Resolves small and full at the smallest worlds the constraints allow, so that a shape
  // that is not an integer or a cost that divides by zero shows up now, not in a run.
  bool dry_run() {
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

  Problem* p_;
  std::string* err_;
};

}  // namespace

bool load_problem(const std::string& dir, Problem* out, std::string* err) {
  Problem p;
  p.dir = dir;
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  p.file = d + "/problem.json";
  if (!std::ifstream(p.file)) {
    *err = p.file + ": cannot open; a problem folder needs a problem.json (see problems/README.md)";
    return false;
  }
  ojson j;
  if (!read_spec_json(p.file, &j, err)) return false;
  Loader loader(&p, err);
  if (!loader.load(j)) return false;
  SearchSpec search;
  if (!load_search(p, &search, err)) return false;
  p.search = std::move(search);
  for (const char* f : {"baseline.cu", "oracle.cpp"})
    if (!fs::exists(fs::path(d) / f)) {
      *err = fmt::format("{}: the problem folder has no {}; write it beside problem.json (see "
                         "problems/README.md)", p.file, f);
      return false;
    }
  *out = std::move(p);
  return true;
}

bool load_all_problems(const std::string& problems_root, std::vector<Problem>* out,
                       std::string* err) {
  std::error_code ec;
  std::vector<std::string> dirs;
  for (const auto& e : fs::directory_iterator(problems_root, ec))
    if (e.is_directory() && fs::exists(e.path() / "problem.json")) dirs.push_back(e.path().string());
  if (ec) {
    *err = problems_root + ": cannot list: " + ec.message();
    return false;
  }
  std::sort(dirs.begin(), dirs.end());
  out->clear();
  std::vector<std::string> errors;
  for (const std::string& d : dirs) {
    Problem p;
    std::string e;
    if (load_problem(d, &p, &e)) out->push_back(std::move(p));
    else errors.push_back(e);
  }
  std::sort(out->begin(), out->end(),
            [](const Problem& a, const Problem& b) { return a.name < b.name; });
  if (!errors.empty()) {
    *err = join(errors, "\n");
    return false;
  }
  return true;
}

bool default_problem(const std::string& problems_root, std::string* name, std::string* err) {
  std::vector<Problem> ps;
  std::string load_err;
  load_all_problems(problems_root, &ps, &load_err);  // the valid ones, whatever the rest
  if (ps.empty()) {
    *err = fmt::format("no problem under {} loads{}{}", problems_root,
                       load_err.empty() ? "" : ":\n", load_err);
    return false;
  }
  std::vector<std::string> flagged;
  for (const Problem& p : ps)
    if (p.is_default) flagged.push_back(p.file);
  if (flagged.size() > 1) {
    *err = fmt::format("{} all say \"default\": true; keep it in one", join(flagged));
    return false;
  }
  *name = ps.front().name;  // sorted by name
  for (const Problem& p : ps)
    if (p.is_default) *name = p.name;
  return true;
}

}  // namespace suite
