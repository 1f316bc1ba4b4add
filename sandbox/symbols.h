// sandbox/symbols.h: what a compiled library imports and exports (nm -D, readelf -d),
// checked after the build: a call the static check could not see through a macro or a
// function pointer still shows up here as an undefined symbol.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "static_check.h"

namespace sandbox {

struct SymbolReport {
  std::vector<std::string> undefined;  // dynamic symbols the library imports (no @version)
  std::vector<std::string> defined;    // dynamic symbols it exports
  std::vector<std::string> needed;     // DT_NEEDED libraries, e.g. "libcudart.so.13"
};

// Runs nm and readelf on lib. False (with *err) when the tools fail on it.
bool read_symbols(const std::string& lib, SymbolReport* out, std::string* err);

// read_symbols, kept in symbols.json beside lib the first time. For the build cache's
// libraries, which never change once in place (build.h): a cached eval then runs neither
// nm nor readelf (three processes, 0.04-0.1 s a library on a loaded 2-core machine).
bool read_symbols_cached(const std::string& lib, SymbolReport* out, std::string* err);

// Appends a finding (rule "symbol" or "needed", file = file_name) for every banned
// import and every NEEDED library outside the allowlist; true when there is none.
bool check_symbols(const SymbolReport& syms, Role role, const std::string& file_name,
                   std::vector<Finding>* findings);

// True when the library exports kf_run (a missing one is a load_error).
bool defines_symbol(const SymbolReport& syms, const std::string& name);

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SymbolReport, undefined, defined, needed)

}  // namespace sandbox
