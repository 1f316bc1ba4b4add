// suite/search_knobs.cpp: see search_knobs.h.
#include "suite/search_knobs.h"

#include <fmt/format.h>

#include <algorithm>

namespace suite {

namespace {

std::string declared_list(const SearchSpec& spec) {
  std::string s;
  for (const DeclaredKnob& d : spec.declared) s += ", " + d.name;
  return s.empty() ? "" : " and this file's own" + s;
}

}  // namespace

bool read_declared_knobs(const ojson& knobs, const std::set<std::string>& known, SpecReader* r,
                         std::vector<DeclaredKnob>* out) {
  if (!knobs.is_object())
    return r->fail("knobs",
                   fmt::format("expected an object of knobs by name, got {}", knobs.type_name()));
  for (auto it = knobs.begin(); it != knobs.end(); ++it) {
    const std::string path = spec_sub("knobs", it.key());
    DeclaredKnob d;
    d.name = it.key();
    Knob builtin;
    if (!is_identifier(d.name)) return r->fail(path, "a knob's name is letters, digits and _");
    if (parse_knob(d.name, &builtin))
      return r->fail(path, "is a built-in knob; list it in a family's \"knobs\" instead");
    if (known.count(d.name))
      return r->fail(path, "is also a name of problem.json or of \"defaults\"; rename the knob");
    if (!r->keys(it.value(), path, {"doc", "macro", "values"}, {"macro", "values"}) ||
        !r->string_at(it.value(), "macro", path, &d.macro))
      return false;
    if (!is_identifier(d.macro))
      return r->fail(spec_sub(path, "macro"), fmt::format("'{}' is no macro name", d.macro));
    const ojson& vs = it.value().at("values");
    const std::string vp = spec_sub(path, "values");
    if (!vs.is_array() || vs.empty() || vs.size() > 16)
      return r->fail(vp, "expected a list of 1 to 16 values for the search to try");
    for (size_t i = 0; i < vs.size(); ++i) {
      int64_t v;
      if (!r->int64_at(vs[i], spec_idx(vp, i), &v)) return false;
      if (v <= 0) return r->fail(spec_idx(vp, i), "must be positive");
      if (std::find(d.values.begin(), d.values.end(), v) != d.values.end())
        return r->fail(spec_idx(vp, i), fmt::format("{} is listed twice", v));
      d.values.push_back(v);
    }
    for (const DeclaredKnob& other : *out)
      if (other.macro == d.macro)
        return r->fail(spec_sub(path, "macro"),
                       fmt::format("{} is also knob {}'s macro", d.macro, other.name));
    out->push_back(std::move(d));
  }
  return true;
}

bool read_family_knobs(const ojson& ks, const std::string& path, const SearchSpec& spec,
                       SpecReader* r, Family* f) {
  if (!ks.is_array())
    return r->fail(path, fmt::format("expected a list of knob names, got {}", ks.type_name()));
  for (size_t i = 0; i < ks.size(); ++i) {
    const std::string kp = spec_idx(path, i);
    const std::string name = ks[i].is_string() ? ks[i].get<std::string>() : "";
    Knob k;
    if (!parse_knob(name, &k)) {
      if (!spec.find_declared(name))
        return r->fail(kp, "not a knob; the knobs are " + knob_list() + declared_list(spec));
      if (std::find(f->declared.begin(), f->declared.end(), name) != f->declared.end())
        return r->fail(kp, fmt::format("{} is listed twice", name));
      f->declared.push_back(name);
      continue;
    }
    if (!knob_applies(f->mech, k))
      return r->fail(kp, fmt::format("{} does not apply to a {} family (reg: blocks, threads and "
                                     "the GEMM's bm, bn, bk, stages, comm_blocks; tma: those and "
                                     "chunk_bytes; host: chunk_elems; ce: none)",
                                     knob_name(k), mech_name(f->mech)));
    if (f->has(k)) return r->fail(kp, fmt::format("{} is listed twice", knob_name(k)));
    f->knobs.push_back(k);
  }
  return true;
}

}  // namespace suite
