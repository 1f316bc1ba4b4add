// suite/search.cpp: the names of search.json's enums, the evaluation of a family's cost
// terms with their defaults, and the advice's placeholders (see search.h; the loader is
// search_load.cpp).
#include "suite/search.h"

#include <fmt/format.h>

#include <sstream>

#include "suite/instance.h"
#include "suite/spec_json.h"

namespace suite {

namespace {

const std::pair<Mech, const char*> kMechs[] = {
    {Mech::reg, "reg"}, {Mech::tma, "tma"}, {Mech::ce, "ce"}, {Mech::host, "host"}};

struct KnobName {
  Knob knob;
  const char* name;
  const char* macro;
};
const KnobName kKnobs[] = {{Knob::blocks, "blocks", "KF_BLOCKS"},
                           {Knob::threads, "threads", "KF_THREADS"},
                           {Knob::chunk_bytes, "chunk_bytes", "KF_CHUNK_BYTES"},
                           {Knob::chunk_elems, "chunk_elems", "KF_CHUNK_ELEMS"},
                           {Knob::bm, "bm", "KF_BM"},
                           {Knob::bn, "bn", "KF_BN"},
                           {Knob::bk, "bk", "KF_BK"},
                           {Knob::stages, "stages", "KF_STAGES"},
                           {Knob::comm_blocks, "comm_blocks", "KF_COMM_BLOCKS"}};

bool eval_term(const Expr& e, const Vars& vars, const char* field, double fallback, double* out,
               std::string* err) {
  if (e.empty()) {
    *out = fallback;
    return true;
  }
  std::string er;
  if (!e.eval(vars, out, &er)) {
    *err = fmt::format("cost.{} \"{}\": {}", field, e.text(), er);
    return false;
  }
  if (*out < 0) {
    *err = fmt::format("cost.{} \"{}\" is {}; it must be non-negative", field, e.text(),
                       format_number(*out));
    return false;
  }
  return true;
}

}  // namespace

const char* mech_name(Mech m) {
  for (const auto& [k, n] : kMechs)
    if (k == m) return n;
  return "?";
}

bool parse_mech(const std::string& s, Mech* out) {
  for (const auto& [k, n] : kMechs)
    if (s == n) return *out = k, true;
  return false;
}

const char* knob_name(Knob k) {
  for (const KnobName& n : kKnobs)
    if (n.knob == k) return n.name;
  return "?";
}

const char* knob_macro(Knob k) {
  for (const KnobName& n : kKnobs)
    if (n.knob == k) return n.macro;
  return "?";
}

bool parse_knob(const std::string& s, Knob* out) {
  for (const KnobName& n : kKnobs)
    if (s == n.name) return *out = n.knob, true;
  return false;
}

const std::vector<Knob>& all_knobs() {
  static const std::vector<Knob> all = [] {
    std::vector<Knob> v;
    for (const KnobName& n : kKnobs) v.push_back(n.knob);
    return v;
  }();
  return all;
}

std::string knob_list() {
  std::string s;
  for (const KnobName& n : kKnobs) s += (s.empty() ? "" : ", ") + std::string(n.name);
  return s;
}

// The knobs a mechanism's kernels read, as the cost model understands them: a grid
// (blocks, threads) for reg and TMA, the TMA tile, the host backend's chunk, and a GEMM's
// tile and communication blocks on the device.
bool knob_applies(Mech m, Knob k) {
  switch (k) {
    case Knob::blocks:
    case Knob::threads:
    case Knob::bm:
    case Knob::bn:
    case Knob::bk:
    case Knob::stages:
    case Knob::comm_blocks:
      return m == Mech::reg || m == Mech::tma;
    case Knob::chunk_bytes:
      return m == Mech::tma;
    case Knob::chunk_elems:
      return m == Mech::host;
  }
  return false;
}

// A source's knob defaults: every "#ifndef NAME" whose next line is "#define NAME VALUE",
// NAME -> VALUE (its first token; empty when there is none).
std::map<std::string, std::string> source_defines(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line, pending;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string directive, name, value;
    words >> directive >> name >> value;
    if (directive == "#define" && !pending.empty() && name == pending) out[name] = value;
    pending = directive == "#ifndef" ? name : "";
  }
  return out;
}

bool Family::has(Knob k) const {
  for (Knob x : knobs)
    if (x == k) return true;
  return false;
}

const DeclaredKnob* SearchSpec::find_declared(const std::string& name) const {
  for (const DeclaredKnob& d : declared)
    if (d.name == name) return &d;
  return nullptr;
}

int64_t SearchSpec::default_of(Knob k) const {
  auto it = defaults.find(k);
  return it == defaults.end() ? 0 : it->second;
}

bool eval_terms(const CostTerms& c, const Expr& fallback_when, const std::string& algo,
                const Instance& inst, const KnobValues& knobs, TermValues* out, std::string* err) {
  Vars v = inst.cost_vars;  // the loader keeps knob names apart from problem.json's
  for (const auto& [k, x] : knobs) v[knob_name(k)] = static_cast<double>(x);
  const double hops = algo == "push" ? 1 : 2;  // a push is posted; a pull waits for the reply
  double fb = 0;
  if (!eval_term(c.comm_bytes, v, "comm_bytes", inst.comm_bytes, &out->comm_bytes, err) ||
      !eval_term(c.hbm_bytes, v, "hbm_bytes", inst.hbm_bytes, &out->hbm_bytes, err) ||
      !eval_term(c.work, v, "work", 0, &out->work, err) ||
      !eval_term(c.hops, v, "hops", hops, &out->hops, err) ||
      !eval_term(c.msg_bytes, v, "msg_bytes", 0, &out->msg_bytes, err) ||
      !eval_term(c.ce_calls, v, "ce_calls", 1, &out->ce_calls, err) ||
      !eval_term(c.flops, v, "flops", 0, &out->flops, err) ||
      !eval_term(c.tiles, v, "tiles", 0, &out->tiles, err))
    return false;
  if (!fallback_when.empty()) {
    std::string er;
    if (!fallback_when.eval(v, &fb, &er)) {
      *err = fmt::format("fallback.when \"{}\": {}", fallback_when.text(), er);
      return false;
    }
  }
  out->fallback = fb != 0;
  return true;
}

bool fill_placeholders(const std::string& text,
                       const std::function<bool(const std::string&, std::string*)>& value,
                       std::string* out, std::string* err) {
  out->clear();
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '}') {
      *err = fmt::format(
          "a '}}' at offset {} closes no placeholder; braces only mark "
          "{{name}} placeholders",
          i);
      return false;
    }
    if (text[i] != '{') {
      *out += text[i];
      continue;
    }
    const size_t end = text.find('}', i);
    const std::string name = end == std::string::npos ? "" : text.substr(i + 1, end - i - 1);
    if (!is_identifier(name)) {
      *err = fmt::format(
          "the '{{' at offset {} opens no {{name}} placeholder; braces only mark "
          "placeholders, whose names are letters, digits and underscores",
          i);
      return false;
    }
    std::string v;
    if (!value(name, &v)) return false;
    *out += v;
    i = end;
  }
  return true;
}

bool render_advice(const SearchSpec& s, const Instance& inst, std::string (*bytes)(double),
                   std::string* out, std::string* err) {
  auto value = [&](const std::string& name, std::string* v) {
    for (const AdviceValue& a : s.advice_values) {
      if (a.name != name) continue;
      double x = 0;
      std::string er;
      const Expr& e = a.bytes.empty() ? a.cond : a.bytes;
      if (!e.eval(inst.cost_vars, &x, &er)) {
        *err = fmt::format("advice.values.{} \"{}\": {}", name, e.text(), er);
        return false;
      }
      *v = !a.bytes.empty() ? bytes(x) : x != 0 ? a.then_text : a.else_text;
      return true;
    }
    *err = fmt::format("advice.text: no value for {{{}}}", name);
    return false;
  };
  return fill_placeholders(s.advice, value, out, err);
}

}  // namespace suite
