// suite/search_knobs.cpp: the knobs a problem declares in its search.json ("knobs"), beyond
// the built-in ones the cost model reads (search.h).
#include <fmt/format.h>

#include "suite/search.h"
#include "suite/spec_json.h"

namespace suite {

const DeclaredKnob* SearchSpec::find_declared(const std::string& name) const {
  for (const DeclaredKnob& k : declared)
    if (k.name == name) return &k;
  return nullptr;
}

bool read_declared_knobs(SpecReader& r, const ojson& j, SearchSpec* s) {
  if (!j.is_object())
    return r.fail("knobs", fmt::format("expected an object of knobs, each {{\"macro\", "
                                       "\"values\"}}, got {}",
                                       j.type_name()));
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string path = spec_sub("knobs", it.key());
    DeclaredKnob k;
    k.name = it.key();
    Knob builtin;
    if (parse_knob(k.name, &builtin))
      return r.fail(path, fmt::format("{} is a built-in knob (its values are machine facts the "
                                      "cost model reads); list it in a family's knobs without "
                                      "declaring it, or give yours another name",
                                      k.name));
    if (!is_identifier(k.name)) return r.fail(path, "a knob's name is letters, digits and _");
    const ojson& v = it.value();
    if (!r.keys(v, path, {"doc", "macro", "values"}, {"macro", "values"}) ||
        !r.string_at(v, "macro", path, &k.macro))
      return false;
    if (!is_identifier(k.macro))
      return r.fail(spec_sub(path, "macro"), fmt::format("'{}' is no macro name", k.macro));
    const ojson& vs = v.at("values");
    if (!vs.is_array() || vs.empty())
      return r.fail(spec_sub(path, "values"), "expected a non-empty list of integers to try");
    for (size_t i = 0; i < vs.size(); ++i) {
      int64_t x;
      if (!r.int64_at(vs[i], spec_idx(spec_sub(path, "values"), i), &x)) return false;
      k.values.push_back(x);
    }
    s->declared.push_back(std::move(k));
  }
  return true;
}

}  // namespace suite
