// sandbox/verdict_read.h: a verdict back from its JSON, the inverse of verdict_json
// (verdict.h): the one reader of verdict.json, of `kforge eval --json` and of a
// trajectory's verdict events.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "verdict.h"

namespace sandbox {

// Keys a file lacks keep their defaults (older files lack the newer figures); a status
// or enum that is not one of the known strings is an error.
void from_json(const nlohmann::json& j, Verdict& v);

// from_json without exceptions: false with *err saying what does not read.
bool verdict_from_json(const nlohmann::json& j, Verdict* out, std::string* err);

// Reads a verdict.json (kforge eval --json's output, or kforge solve's, whose extra
// "solve" object is not part of the verdict). False with *err naming the file.
bool read_verdict(const std::string& path, Verdict* out, std::string* err);

}  // namespace sandbox
