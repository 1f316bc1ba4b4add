// suite/search_knobs.h: the knobs of search.json, read for its loader (search_load.cpp):
// the file's own declared knobs ("knobs" at the top) and each family's list.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "suite/search.h"
#include "suite/spec_json.h"

namespace suite {

// The top-level "knobs" object into *out: each a name (an identifier that is no built-in
// knob and no name in `known`, problem.json's and the defaults'), a "macro" the sources
// read, and the "values" the search tries (1 to 16 positive integers, no repeats).
bool read_declared_knobs(const ojson& knobs, const std::set<std::string>& known, SpecReader* r,
                         std::vector<DeclaredKnob>* out);

// A family's "knobs" list: built-in knobs that apply to its mechanism, and names of
// `spec`'s declared knobs, each once.
bool read_family_knobs(const ojson& ks, const std::string& path, const SearchSpec& spec,
                       SpecReader* r, Family* f);

}  // namespace suite
