// suite/instance.cpp: Problem + world + size + overrides -> Instance.
#include "suite/instance.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "sandbox/text.h"

namespace suite {

using sandbox::trim;

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string value_text(const Value& v) {
  return v.is_string ? v.str : format_number(v.num);
}

class Resolver {
 public:
  Resolver(const Problem& p, int world, const std::string& size, Instance* out, std::string* err,
           bool* unsatisfied)
      : p_(p), world_(world), size_(size), out_(out), err_(err), unsatisfied_(unsatisfied) {}

  bool run(const std::vector<std::string>& overrides) {
    out_->problem = p_.name;
    out_->size = size_;
    out_->world = world_;
    return values(overrides) && vars() && constraints() && tensors() && costs();
  }

 private:
  // An error in problem.json itself, found while resolving.
  bool spec_fail(const std::string& field, const std::string& msg) {
    *err_ = fmt::format("{}: {}: {} (size {}, world {})", p_.file, field, msg, size_, world_);
    return false;
  }
  bool usage_fail(const std::string& msg) {
    *err_ = fmt::format("{}: {}", p_.name, msg);
    return false;
  }
  bool unsat_fail(const std::string& msg) {
    if (unsatisfied_) *unsatisfied_ = true;
    return usage_fail(msg);
  }

  bool values(const std::vector<std::string>& overrides) {
    if (world_ < p_.world_min || world_ > p_.world_max)
      return unsat_fail(
          fmt::format("world {} is outside the world sizes the problem supports, "
                      "{}..{} (world in {}); pick a world in that range",
                      world_, p_.world_min, p_.world_max, p_.file));
    const SizeSpec* s = p_.find_size(size_);
    if (!s)
      return usage_fail(
          fmt::format("no size '{}'; the sizes are: {}", size_, join(p_.size_names())));
    for (const ParamSpec& ps : p_.params) vals_[ps.name] = ps.def;
    for (auto& [k, v] : s->set) vals_[k] = v;
    std::vector<std::string> names;
    for (const ParamSpec& ps : p_.params) names.push_back(ps.name);
    for (const std::string& o : overrides) {
      size_t eq = o.find('=');
      if (eq == std::string::npos)
        return usage_fail(fmt::format("override '{}' is not PARAM=VALUE (e.g. n=4096)", o));
      std::string k = trim(o.substr(0, eq)), v = trim(o.substr(eq + 1));
      const ParamSpec* ps = p_.find_param(k);
      if (!ps)
        return usage_fail(fmt::format("override '{}': no parameter '{}'; the parameters are: {}", o,
                                      k, names.empty() ? "none" : join(names)));
      Value val;
      if (ps->numeric()) {
        std::string e;
        if (!eval_expr(v, {}, &val.num, &e))
          return usage_fail(
              fmt::format("override '{}': {} is {}, and the value must be a number "
                          "or a constant expression such as 2^20: {}",
                          o, k, ps->type_name(), e));
        if (ps->type == ParamType::integer && !is_exact_integer(val.num))
          return usage_fail(fmt::format("override '{}': {} is int but {} is not an integer", o, k,
                                        format_number(val.num)));
      } else if (ps->type == ParamType::dtype) {
        kf::DType t;
        if (!sandbox::parse_dtype(v, &t))
          return usage_fail(
              fmt::format("override '{}': '{}' is not a dtype (fp32, fp16, bf16, "
                          "fp64, int32, int64, uint8, fp8_e4m3, fp8_e5m2)",
                          o, v));
        val.is_string = true;
        val.str = sandbox::dtype_name(t);
      } else {
        val.is_string = true;
        val.str = v;
      }
      if (!ps->choices.empty()) {
        bool ok = false;
        std::vector<std::string> cs;
        for (const Value& c : ps->choices) {
          ok |= c.is_string ? c.str == val.str : c.num == val.num;
          cs.push_back(value_text(c));
        }
        if (!ok)
          return usage_fail(
              fmt::format("override '{}': {} is not a choice of {}; the choices "
                          "are: {}",
                          o, value_text(val), k, join(cs)));
      }
      vals_[k] = val;
    }
    return true;
  }

  bool vars() {
    for (const ParamSpec& ps : p_.params) {
      const Value& v = vals_.at(ps.name);
      if (v.is_string)
        out_->str_params[ps.name] = v.str;
      else
        out_->params[ps.name] = v.num;
      if (ps.numeric()) base_[ps.name] = v.num;
    }
    base_["world"] = world_;
    out_->compute_dtype = kf::DType::f32;
    bool have_dtype = false;
    if (const ParamSpec* d = p_.find_param("dtype"); d && d->type == ParamType::dtype) {
      sandbox::parse_dtype(vals_.at("dtype").str, &out_->compute_dtype);
      base_["dsize"] = static_cast<double>(kf::dtype_size(out_->compute_dtype));
      have_dtype = true;
    }
    if (!have_dtype)
      for (const TensorSpec& t : p_.tensors)
        if (t.output()) {
          dtype_of(t, &out_->compute_dtype);
          break;
        }
    return true;
  }

  void dtype_of(const TensorSpec& t, kf::DType* out) {
    std::string name = t.dtype[0] == '$' ? vals_.at(t.dtype.substr(1)).str : t.dtype;
    sandbox::parse_dtype(name, out);  // validated by load_problem
  }

  // "n=4099, world=2": the values of the names an expression uses.
  std::string values_of(const Expr& e, const Vars& vars) {
    std::set<std::string> used;
    e.names(&used);
    std::vector<std::string> parts;
    for (const std::string& n : used)
      if (auto it = vars.find(n); it != vars.end())
        parts.push_back(n + "=" + format_number(it->second));
    return join(parts);
  }

  bool constraints() {
    for (size_t i = 0; i < p_.constraints.size(); ++i) {
      const Expr& c = p_.constraints[i];
      double v;
      std::string e;
      if (!c.eval(base_, &v, &e)) return spec_fail(fmt::format("constraints[{}]", i), e);
      if (v == 0)
        return unsat_fail(
            fmt::format("constraint \"{}\" fails for {} (size {}; constraints[{}] "
                        "in {}); choose sizes, overrides or a world that satisfy "
                        "it",
                        c.text(), values_of(c, base_), size_, i, p_.file));
    }
    return true;
  }

  bool eval(const Expr& e, const Vars& vars, const std::string& field, double* out,
            const char* extra = "") {
    std::string er;
    if (!e.eval(vars, out, &er)) return spec_fail(field, er + extra);
    return true;
  }

  bool tensors() {
    for (size_t i = 0; i < p_.tensors.size(); ++i) {
      const TensorSpec& t = p_.tensors[i];
      std::string path = fmt::format("tensors[{}]", i);
      sandbox::JobTensor jt;
      jt.name = t.name;
      jt.output = t.output();
      dtype_of(t, &jt.dtype);
      for (int r = 0; r < world_; ++r) {
        Vars v = base_;
        v["rank"] = r;
        std::vector<int64_t> shape;
        double numel = 1;
        for (size_t d = 0; d < t.shape.size(); ++d) {
          std::string field = fmt::format("{}.shape[{}]", path, d);
          double x;
          if (!eval(t.shape[d], v, field, &x)) return false;
          if (!is_exact_integer(x) || x < 0)
            return spec_fail(field, fmt::format("\"{}\" is {} at rank {} ({}), not a "
                                                "non-negative integer; add a constraint that "
                                                "rules this out or fix the shape",
                                                t.shape[d].text(), format_number(x), r,
                                                values_of(t.shape[d], v)));
          shape.push_back(static_cast<int64_t>(x));
          numel *= x;
        }
        double bytes = numel * static_cast<double>(kf::dtype_size(jt.dtype));
        if (bytes >= 4611686018427387904.0)  // 2^62
          return spec_fail(path + ".shape", fmt::format("{} bytes at rank {} is too large",
                                                        format_number(bytes), r));
        jt.shape_by_rank.push_back(std::move(shape));
        if (r == 0) {
          base_cost_[t.name + "_numel"] = numel;
          base_cost_[t.name + "_bytes"] = bytes;
        }
      }
      if (t.has_init) {
        bool uni = t.init.dist != "normal";
        jt.init.dist = t.init.dist;
        if (!eval(t.init.a, base_, path + (uni ? ".init.lo" : ".init.mean"), &jt.init.a) ||
            !eval(t.init.b, base_, path + (uni ? ".init.hi" : ".init.std"), &jt.init.b))
          return false;
        if (t.init.dist == "int" && (!is_exact_integer(jt.init.a) || !is_exact_integer(jt.init.b)))
          return spec_fail(path + ".init",
                           fmt::format("an int distribution needs integer lo and "
                                       "hi, got {} and {}",
                                       format_number(jt.init.a), format_number(jt.init.b)));
        if (uni && jt.init.a > jt.init.b)
          return spec_fail(path + ".init",
                           fmt::format("lo {} is above hi {}", format_number(jt.init.a),
                                       format_number(jt.init.b)));
        if (!uni && jt.init.b < 0) return spec_fail(path + ".init.std", "must be non-negative");
      }
      if (jt.output) {
        std::string dn = sandbox::dtype_name(jt.dtype);
        auto it = p_.tolerance.find(dn);
        if (it == p_.tolerance.end()) {
          std::vector<std::string> have;
          for (auto& [k, v] : p_.tolerance) have.push_back(k);
          return spec_fail("tolerance",
                           fmt::format("output '{}' is {} but tolerance has no {} "
                                       "entry (has: {}); add one",
                                       t.name, dn, dn, have.empty() ? "none" : join(have)));
        }
        jt.atol = it->second.atol;
        jt.rtol = it->second.rtol;
      }
      out_->tensors.push_back(std::move(jt));
    }
    return true;
  }

  bool nonneg(const Expr& e, const Vars& v, const std::string& field, double* out) {
    if (!eval(e, v, field, out)) return false;
    if (*out < 0)
      return spec_fail(field, fmt::format("\"{}\" is {} ({}); it must be non-negative", e.text(),
                                          format_number(*out), values_of(e, v)));
    return true;
  }

  bool costs() {
    Vars v = base_;
    v.insert(base_cost_.begin(), base_cost_.end());
    out_->cost_vars = v;
    if (!nonneg(p_.comm_bytes, v, "cost.comm_bytes", &out_->comm_bytes) ||
        !nonneg(p_.hbm_bytes, v, "cost.hbm_bytes", &out_->hbm_bytes) ||
        !nonneg(p_.flops, v, "cost.flops", &out_->flops))
      return false;
    out_->has_busbw = p_.has_busbw;
    if (p_.has_busbw && (!nonneg(p_.busbw_bytes, v, "busbw.bytes", &out_->busbw_bytes) ||
                         !nonneg(p_.busbw_factor, v, "busbw.factor", &out_->busbw_factor)))
      return false;
    if (!p_.workspace_bytes.empty()) {
      double w;
      if (!nonneg(p_.workspace_bytes, base_, "workspace_bytes", &w)) return false;
      if (!is_exact_integer(w))
        return spec_fail("workspace_bytes",
                         fmt::format("{} is not a whole number of bytes", format_number(w)));
      out_->workspace_bytes = static_cast<uint64_t>(w);
    }
    return true;
  }

  const Problem& p_;
  int world_;
  std::string size_;
  Instance* out_;
  std::string* err_;
  bool* unsatisfied_;
  std::map<std::string, Value> vals_;
  Vars base_;       // numeric parameters, world, dsize
  Vars base_cost_;  // <tensor>_numel, <tensor>_bytes at rank 0
};

}  // namespace

bool resolve_instance(const Problem& p, int world, const std::string& size,
                      const std::vector<std::string>& overrides, Instance* out, std::string* err,
                      bool* unsatisfied) {
  if (unsatisfied) *unsatisfied = false;
  Instance inst;
  Resolver r(p, world, size, &inst, err, unsatisfied);
  if (!r.run(overrides)) return false;
  *out = std::move(inst);
  return true;
}

void apply_instance(const Instance& inst, sandbox::Job* job) {
  job->size = inst.size;
  job->params = inst.params;
  job->str_params = inst.str_params;
  job->tensors = inst.tensors;
  job->workspace_bytes = inst.workspace_bytes;
}

std::string instance_label(const Instance& inst) {
  std::string s = fmt::format("{} {} world={}", inst.problem, inst.size, inst.world);
  std::map<std::string, std::string> all = inst.str_params;
  for (auto& [k, v] : inst.params) all[k] = format_number(v);
  for (auto& [k, v] : all) s += " " + k + "=" + v;
  return s;
}

}  // namespace suite
