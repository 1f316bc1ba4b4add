// suite/problem_loader.cpp: problem.json's name, category, parameters, world, sizes and
// tolerances (see problem_loader.h).
#include "suite/problem_loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "sandbox/job.h"

namespace suite {

namespace fs = std::filesystem;

bool ProblemLoader::names_known(const Expr& e, const std::string& path,
                                const std::set<std::string>& known, const char* where) {
  return SpecReader::names_known(e, path, known, where, [&](const std::string& n) {
    if (n == "rank") return std::string("; `rank` may only be used in tensor shapes");
    if (ends_with(n, "_numel") || ends_with(n, "_bytes"))
      return std::string("; <tensor>_numel and <tensor>_bytes may only be used in cost and busbw");
    if (p_->find_param(n) && !p_->find_param(n)->numeric())
      return fmt::format("; '{}' is a {} parameter, and only numeric ones have a value", n,
                         p_->find_param(n)->type_name());
    return std::string();
  });
}

bool ProblemLoader::top(const ojson& j) {
  if (!keys(j, "",
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
    return fail("category",
                fmt::format("\"{}\" is not a category; use one of: {}", p_->category, join(cats)));
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
bool ProblemLoader::value_for(const ParamSpec& ps, const ojson& v, const std::string& path,
                              Value* out) {
  if (ps.numeric()) {
    double x;
    if (v.is_number()) {
      x = v.get<double>();
    } else if (v.is_string()) {  // a constant expression such as "2^20"
      std::string e;
      if (!eval_expr(v.get<std::string>(), {}, &x, &e))
        return fail(path, e + fmt::format("; {} is {}: give a number", ps.name, ps.type_name()));
    } else {
      return fail(path, fmt::format("{} is {}: expected a number, got {}", ps.name, ps.type_name(),
                                    v.type_name()));
    }
    if (ps.type == ParamType::integer && !is_exact_integer(x))
      return fail(path,
                  fmt::format("{} is int but {} is not an integer", ps.name, format_number(x)));
    out->is_string = false;
    out->num = x;
    return true;
  }
  if (!v.is_string())
    return fail(path, fmt::format("{} is {}: expected a string, got {}", ps.name, ps.type_name(),
                                  v.type_name()));
  out->is_string = true;
  out->str = v.get<std::string>();
  if (ps.type == ParamType::dtype) {
    kf::DType t;
    if (!sandbox::parse_dtype(out->str, &t))
      return fail(path, fmt::format("\"{}\" is not a dtype; use one of fp32, fp16, bf16, fp64, "
                                    "int32, int64, uint8, fp8_e4m3, fp8_e5m2",
                                    out->str));
    out->str = sandbox::dtype_name(t);
  }
  return true;
}

bool ProblemLoader::in_choices(const ParamSpec& ps, const Value& v, const std::string& path) {
  if (ps.choices.empty()) return true;
  std::vector<std::string> names;
  for (const Value& c : ps.choices) {
    if (c.is_string ? c.str == v.str : c.num == v.num) return true;
    names.push_back(c.is_string ? c.str : format_number(c.num));
  }
  return fail(path, fmt::format("{} is not one of the choices of {}: {}",
                                v.is_string ? v.str : format_number(v.num), ps.name, join(names)));
}

bool ProblemLoader::params(const ojson& j) {
  if (!j.contains("params")) return true;
  const ojson& ps = j.at("params");
  if (!ps.is_object())
    return fail("params", fmt::format("expected an object of parameters, got {}", ps.type_name()));
  static const std::set<std::string> reserved = {"world",    "rank",  "dsize", "min", "max",
                                                 "ceil_div", "floor", "ceil",  "log2"};
  for (auto it = ps.begin(); it != ps.end(); ++it) {
    std::string path = sub("params", it.key());
    ParamSpec s;
    s.name = it.key();
    if (!is_identifier(s.name))
      return fail(path, "a parameter name must be letters, digits and underscores");
    if (reserved.count(s.name))
      return fail(path,
                  fmt::format("'{}' is reserved in expressions; rename the parameter", s.name));
    const ojson& v = it.value();
    if (!keys(v, path, {"type", "default", "choices", "doc"}, {"type", "default"})) return false;
    std::string type;
    if (!string_at(v, "type", path, &type)) return false;
    if (!sandbox::parse_enum(type, &s.type))
      return fail(sub(path, "type"), fmt::format("\"{}\" is not a parameter type; use int, "
                                                 "float, dtype or string",
                                                 type));
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

bool ProblemLoader::world(const ojson& j) {
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

bool ProblemLoader::sizes(const ojson& j) {
  const ojson& ss = j.at("sizes");
  if (!ss.is_object())
    return fail("sizes", fmt::format("expected an object of named sizes, got {}", ss.type_name()));
  std::vector<std::string> declared;
  for (const ParamSpec& ps : p_->params) declared.push_back(ps.name);
  for (auto it = ss.begin(); it != ss.end(); ++it) {
    std::string path = sub("sizes", it.key());
    SizeSpec s;
    s.name = it.key();
    const ojson& v = it.value();
    if (!v.is_object())
      return fail(path,
                  fmt::format("expected an object of parameter values, got {}", v.type_name()));
    for (auto kv = v.begin(); kv != v.end(); ++kv) {
      std::string kp = sub(path, kv.key());
      const ParamSpec* ps = p_->find_param(kv.key());
      if (!ps)
        return fail(kp, fmt::format("'{}' is not a declared parameter (declared: {}); declare "
                                    "it in params or fix the name",
                                    kv.key(), declared.empty() ? "none" : join(declared)));
      Value val;
      if (!value_for(*ps, kv.value(), kp, &val) || !in_choices(*ps, val, kp)) return false;
      s.set.emplace_back(kv.key(), val);
    }
    p_->sizes.push_back(std::move(s));
  }
  for (const char* req : {"small", "full"})
    if (!p_->find_size(req))
      return fail("sizes", fmt::format("missing the required size '{}' (small is checked "
                                       "against the oracle, full is timed); add it",
                                       req));
  return true;
}

bool ProblemLoader::tolerance(const ojson& j) {
  const ojson& ts = j.at("tolerance");
  if (!ts.is_object())
    return fail("tolerance",
                fmt::format("expected an object keyed by dtype name, got {}", ts.type_name()));
  for (auto it = ts.begin(); it != ts.end(); ++it) {
    std::string path = sub("tolerance", it.key());
    kf::DType dt;
    if (!sandbox::parse_dtype(it.key(), &dt))
      return fail(path, fmt::format("\"{}\" is not a dtype name; key tolerances by fp32, bf16, "
                                    "fp16, ...",
                                    it.key()));
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

}  // namespace suite
