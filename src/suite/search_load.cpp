// suite/search_load.cpp: search.json -> suite::SearchSpec, as strict as problem.json's
// loader: unknown keys, unknown names and a default that disagrees with the source are
// errors that name the file and the field (see search.h).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "suite/instance.h"
#include "suite/problem.h"
#include "suite/search_knobs.h"
#include "suite/spec_json.h"

namespace suite {

namespace {

namespace fs = std::filesystem;

const char* const kCostKeys[] = {"comm_bytes", "hbm_bytes", "work",  "hops",
                                 "msg_bytes",  "ce_calls",  "flops", "tiles"};

Expr* term(CostTerms* c, const std::string& key) {
  if (key == "comm_bytes") return &c->comm_bytes;
  if (key == "hbm_bytes") return &c->hbm_bytes;
  if (key == "work") return &c->work;
  if (key == "hops") return &c->hops;
  if (key == "msg_bytes") return &c->msg_bytes;
  if (key == "flops") return &c->flops;
  if (key == "tiles") return &c->tiles;
  return &c->ce_calls;
}

const Expr& term(const CostTerms& c, const std::string& key) {
  return *term(const_cast<CostTerms*>(&c), key);
}

class SearchLoader : public SpecReader {
 public:
  SearchLoader(const Problem& p, SearchSpec* s, std::string* err)
      : SpecReader(s->file, err), p_(p), s_(s), known_(p.names(true)) {}

  bool load(const ojson& j) {
    if (!keys(j, "", {"doc", "defaults", "knobs", "cost", "families", "advice"}, {})) return false;
    CostTerms top;
    if (!defaults(j) ||
        (j.contains("knobs") && !read_declared_knobs(j.at("knobs"), known_, this, &s_->declared)) ||
        (j.contains("cost") && !cost(j.at("cost"), "cost", &top)) || !families(j, top) ||
        !advice(j))
      return false;
    for (size_t i = 0; i < s_->families.size(); ++i)
      if (!source(s_->families[i], spec_idx("families", i))) return false;
    for (const auto& [k, v] : s_->defaults)
      if (!defined_.count(k))
        return fail(spec_sub("defaults", knob_name(k)),
                    fmt::format("no family's source defines {}; remove the default or fix the "
                                "family's source",
                                knob_macro(k)));
    return dry_run();
  }

 private:
  bool defaults(const ojson& j) {
    if (!j.contains("defaults")) return true;
    const ojson& d = j.at("defaults");
    if (!d.is_object())
      return fail("defaults",
                  fmt::format("expected an object of knob values, got {}", d.type_name()));
    for (auto it = d.begin(); it != d.end(); ++it) {
      const std::string path = spec_sub("defaults", it.key());
      Knob k;
      if (!parse_knob(it.key(), &k)) return fail(path, "not a knob; the knobs are " + knob_list());
      int64_t v;
      if (!int64_at(it.value(), path, &v)) return false;
      if (v <= 0) return fail(path, "must be positive");
      // Expressions name the knobs in force (tiles = "ceil_div(M, bm) * ..."), so a knob
      // may not shadow a name of problem.json.
      if (!known_.insert(it.key()).second)
        return fail(path,
                    "is also a name of problem.json; the cost expressions could not tell "
                    "them apart, so rename the parameter");
      s_->defaults[k] = v;
    }
    return true;
  }

  bool cost(const ojson& c, const std::string& path, CostTerms* out) {
    if (!keys(c, path, std::vector<std::string>(std::begin(kCostKeys), std::end(kCostKeys)), {}))
      return false;
    for (auto it = c.begin(); it != c.end(); ++it) {
      Expr* e = term(out, it.key());
      const std::string p = spec_sub(path, it.key());
      if (!expr_at(it.value(), p, e) || !names_known(*e, p, known_, "search.json's cost"))
        return false;
    }
    return true;
  }

  bool families(const ojson& j, const CostTerms& top) {
    if (!j.contains("families")) return true;
    const ojson& fs = j.at("families");
    if (!fs.is_array())
      return fail("families", fmt::format("expected a list of families, got {}", fs.type_name()));
    std::set<std::string> seen;
    for (size_t i = 0; i < fs.size(); ++i) {
      const std::string path = spec_idx("families", i);
      Family f;
      if (!family(fs[i], path, &f)) return false;
      for (const char* k : kCostKeys)
        if (term(&f.cost, k)->empty()) *term(&f.cost, k) = term(top, k);
      if (!seen.insert(fmt::format("{}/{}", mech_name(f.mech), f.algo)).second)
        return fail(path, fmt::format("a second family {}/{}; mechanism and algorithm name a "
                                      "family, so make one of them differ",
                                      mech_name(f.mech), f.algo));
      if (!needs(f, f.mech, path) || (!f.fallback_when.empty() && !needs(f, f.fallback_mech, path)))
        return false;
      s_->families.push_back(std::move(f));
    }
    return true;
  }

  // What the cost model needs for a family that moves bytes with `m`.
  bool needs(const Family& f, Mech m, const std::string& path) {
    if (!f.cost.flops.empty()) return gemm_needs(f, m, path);
    if (m == Mech::ce && f.cost.msg_bytes.empty())
      return fail(path,
                  "a ce family needs cost.msg_bytes (bytes per copy-engine call), in the "
                  "family's cost or the top-level cost");
    if (m != Mech::ce && f.cost.work.empty())
      return fail(path, fmt::format("a {} family needs cost.work (the 16-byte vectors the grid "
                                    "strides over), in the family's cost or the top-level cost",
                                    mech_name(m)));
    for (Knob k : {Knob::blocks, Knob::threads})  // a host family's are optional (analysis.cpp)
      if ((m == Mech::reg || m == Mech::tma) && !s_->default_of(k))
        return fail("defaults", fmt::format("missing {}: the cost model needs the sources' "
                                            "default for a {} family ({})",
                                            knob_name(k), mech_name(m), path));
    if (m == Mech::tma && !s_->default_of(Knob::chunk_bytes))
      return fail("defaults", fmt::format("missing chunk_bytes: the cost model needs the TMA "
                                          "tile's default ({})",
                                          path));
    return true;
  }

  // A GEMM family's grid is its tiles (the tile fixes the threads), and a TMA one moves
  // msg_bytes per store or the chunk_bytes tile.
  bool gemm_needs(const Family& f, Mech m, const std::string& path) {
    if (m == Mech::ce) return fail(path, "a family with cost.flops computes: use reg, tma or host");
    if (f.cost.tiles.empty())
      return fail(path,
                  "a family with cost.flops needs cost.tiles (the GEMM's output tiles per "
                  "rank, e.g. \"ceil_div(M, bm) * ceil_div(N, bn)\")");
    if (m != Mech::host && !s_->default_of(Knob::blocks))
      return fail("defaults", fmt::format("missing blocks: the cost model needs the grid's "
                                          "default for a GEMM family ({})",
                                          path));
    if (m == Mech::tma && f.cost.msg_bytes.empty() && !s_->default_of(Knob::chunk_bytes))
      return fail(path,
                  "a tma GEMM family needs cost.msg_bytes (bytes per TMA store) or a "
                  "chunk_bytes default");
    return true;
  }

  bool family(const ojson& j, const std::string& path, Family* f) {
    if (!keys(j, path,
              {"doc", "source", "mech", "algo", "macros", "knobs", "cost", "fallback", "overlap"},
              {"source", "mech", "algo"}))
      return false;
    if (j.contains("overlap")) {
      if (!j.at("overlap").is_boolean())
        return fail(spec_sub(path, "overlap"),
                    "expected true (a fused kernel: the GEMM and the "
                    "communication overlap) or false");
      f->overlap = j.at("overlap").get<bool>();
    }
    std::string mech;
    if (!string_at(j, "source", path, &f->source) || !string_at(j, "mech", path, &mech) ||
        !string_at(j, "algo", path, &f->algo) || !mech_at(mech, spec_sub(path, "mech"), &f->mech))
      return false;
    if (!is_identifier(f->algo))
      return fail(spec_sub(path, "algo"), "must be letters, digits and underscores");
    if (j.contains("macros") && !macros(j.at("macros"), spec_sub(path, "macros"), f)) return false;
    if (j.contains("knobs") &&
        !read_family_knobs(j.at("knobs"), spec_sub(path, "knobs"), *s_, this, f))
      return false;
    if (j.contains("cost") && !cost(j.at("cost"), spec_sub(path, "cost"), &f->cost)) return false;
    if (j.contains("fallback")) {
      const ojson& fb = j.at("fallback");
      const std::string fp = spec_sub(path, "fallback");
      if (!keys(fb, fp, {"when", "mech"}, {"when", "mech"}) ||
          !expr_at(fb.at("when"), spec_sub(fp, "when"), &f->fallback_when) ||
          !names_known(f->fallback_when, spec_sub(fp, "when"), known_, "search.json's cost") ||
          !string_at(fb, "mech", fp, &mech) ||
          !mech_at(mech, spec_sub(fp, "mech"), &f->fallback_mech))
        return false;
      if (f->fallback_mech == f->mech || f->fallback_mech == Mech::host || f->mech == Mech::host)
        return fail(spec_sub(fp, "mech"),
                    "a fallback is another device mechanism than the "
                    "family's (reg, tma or ce)");
    }
    const bool cpp = f->source.size() > 4 && f->source.substr(f->source.size() - 4) == ".cpp";
    if (cpp != (f->mech == Mech::host))
      return fail(spec_sub(path, "source"),
                  "a host family's source is C++ (.cpp) and a reg, tma "
                  "or ce family's is CUDA (.cu)");
    return true;
  }

  bool mech_at(const std::string& s, const std::string& path, Mech* out) {
    if (parse_mech(s, out)) return true;
    return fail(path, fmt::format("\"{}\" is not a mechanism; use reg, tma, ce or host", s));
  }

  bool macros(const ojson& m, const std::string& path, Family* f) {
    if (!m.is_object())
      return fail(path, fmt::format("expected an object of macro values, got {}", m.type_name()));
    for (auto it = m.begin(); it != m.end(); ++it) {
      std::string v;
      if (!is_identifier(it.key()))
        return fail(path, fmt::format("'{}' is no macro name", it.key()));
      if (!string_at(m, it.key(), path, &v)) return false;
      f->macros.emplace_back(it.key(), v);
    }
    return true;
  }

  bool advice(const ojson& j) {
    if (!j.contains("advice")) return true;
    const ojson& a = j.at("advice");
    if (!keys(a, "advice", {"text", "values"}, {"text"}) ||
        !string_at(a, "text", "advice", &s_->advice))
      return false;
    if (a.contains("values")) {
      const ojson& vs = a.at("values");
      if (!vs.is_object())
        return fail("advice.values",
                    fmt::format("expected an object of placeholders, got {}", vs.type_name()));
      for (auto it = vs.begin(); it != vs.end(); ++it)
        if (!advice_value(it.key(), it.value(), spec_sub("advice.values", it.key()))) return false;
    }
    std::set<std::string> used;
    std::string out, e;
    auto value = [&](const std::string& name, std::string*) {
      used.insert(name);
      for (const AdviceValue& v : s_->advice_values)
        if (v.name == name) return true;
      e = fmt::format("{{{}}} has no entry in advice.values; add one", name);
      return false;
    };
    if (!fill_placeholders(s_->advice, value, &out, &e)) return fail("advice.text", e);
    for (const AdviceValue& v : s_->advice_values)
      if (!used.count(v.name))
        return fail(spec_sub("advice.values", v.name),
                    "the text has no {" + v.name + "}; use it or remove it");
    return true;
  }

  bool advice_value(const std::string& name, const ojson& v, const std::string& path) {
    AdviceValue a;
    a.name = name;
    if (!is_identifier(name)) return fail(path, "a placeholder's name is letters, digits and _");
    if (v.is_object() && v.contains("bytes")) {
      if (!keys(v, path, {"bytes"}, {"bytes"}) ||
          !expr_at(v.at("bytes"), spec_sub(path, "bytes"), &a.bytes) ||
          !names_known(a.bytes, spec_sub(path, "bytes"), known_, "search.json's advice"))
        return false;
    } else {
      if (!keys(v, path, {"if", "then", "else"}, {"if", "then", "else"}) ||
          !expr_at(v.at("if"), spec_sub(path, "if"), &a.cond) ||
          !names_known(a.cond, spec_sub(path, "if"), known_, "search.json's advice") ||
          !string_at(v, "then", path, &a.then_text, false) ||
          !string_at(v, "else", path, &a.else_text, false))
        return false;
    }
    s_->advice_values.push_back(std::move(a));
    return true;
  }

  // The family's source exists, selects on its macros, reads its knobs, and every knob it
  // reads has its default here (so the defaults the cost model assumes cannot drift).
  bool source(const Family& f, const std::string& path) {
    const std::string file = p_.dir + "/" + f.source;
    std::ifstream in(file);
    if (!in)
      return fail(spec_sub(path, "source"), fmt::format("cannot read {}; name a file of the "
                                                        "problem's folder",
                                                        file));
    std::stringstream text;
    text << in.rdbuf();
    const auto defs = source_defines(text.str());
    for (const auto& [m, v] : f.macros)
      if (!defs.count(m))
        return fail(spec_sub(path, "macros." + m),
                    fmt::format("{} has no \"#ifndef {} / #define {} ...\", so the define would "
                                "change nothing",
                                f.source, m, m));
    for (Knob k : f.knobs)
      if (!defs.count(knob_macro(k)))
        return fail(spec_sub(path, "knobs"),
                    fmt::format("{} does not read {} with a default "
                                "(#ifndef {} / #define {} ...)",
                                f.source, knob_macro(k), knob_macro(k), knob_macro(k)));
    for (const std::string& name : f.declared) {
      const std::string& m = s_->find_declared(name)->macro;
      if (!defs.count(m))
        return fail(spec_sub(path, "knobs"),
                    fmt::format("{} does not read {} (knob {}) with a default "
                                "(#ifndef {} / #define {} ...)",
                                f.source, m, name, m, m));
    }
    for (Knob k : all_knobs()) {
      auto it = defs.find(knob_macro(k));
      if (it == defs.end()) continue;
      defined_.insert(k);
      if (!s_->default_of(k))
        return fail("defaults", fmt::format("missing {}: {} defines {} {}; declare the same "
                                            "default here",
                                            knob_name(k), f.source, knob_macro(k), it->second));
      if (std::to_string(s_->default_of(k)) != it->second)
        return fail(spec_sub("defaults", knob_name(k)),
                    fmt::format("is {} but {} defines {} {}; make them equal", s_->default_of(k),
                                f.source, knob_macro(k), it->second));
    }
    return true;
  }

  // Every term and advice value at the small and full sizes and the two smallest worlds,
  // so that a division by zero shows up now, not in a search.
  bool dry_run() {
    for (const char* size : {"small", "full"}) {
      int ok = 0;
      for (int w = p_.world_min; w <= std::min(p_.world_max, p_.world_min + 7) && ok < 2; ++w) {
        Instance inst;
        std::string e;
        if (!resolve_instance(p_, w, size, {}, &inst, &e)) continue;
        ++ok;
        for (size_t i = 0; i < s_->families.size(); ++i) {
          const Family& f = s_->families[i];
          TermValues v;
          if (!eval_terms(f.cost, f.fallback_when, f.algo, inst, s_->defaults, &v, &e))
            return fail(spec_idx("families", i), fmt::format("{} (size {}, world {}; the family's "
                                                             "terms over the top-level cost)",
                                                             e, size, w));
        }
        std::string text;
        if (!render_advice(
                *s_, inst, [](double) { return std::string(); }, &text, &e))
          return fail("", fmt::format("{} (size {}, world {})", e, size, w));
      }
    }
    return true;
  }

  const Problem& p_;
  SearchSpec* s_;
  std::set<std::string> known_;
  std::set<Knob> defined_;
};

}  // namespace

bool load_search(const Problem& p, SearchSpec* out, std::string* err) {
  std::string d = p.dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  SearchSpec s;
  s.file = d + "/search.json";
  if (!fs::exists(s.file)) {
    *out = SearchSpec();
    return true;
  }
  ojson j;
  if (!read_spec_json(s.file, &j, err)) return false;
  SearchLoader loader(p, &s, err);
  if (!loader.load(j)) return false;
  *out = std::move(s);
  return true;
}

}  // namespace suite
