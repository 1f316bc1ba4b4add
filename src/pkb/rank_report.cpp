// pkb/rank_report.cpp: see rank_report.h.
#include "pkb/rank_report.h"

#include <fmt/core.h>

#include "pkb/text.h"
#include "sandbox/enum_names.h"

namespace pkb {

using sandbox::Status;

namespace {

Status status_of(const std::string& s) {
  Status st = Status::crash;
  if (!sandbox::parse_enum(s, &st)) return Status::crash;
  return st;
}

}  // namespace

void from_json(const nlohmann::json& j, RankEnd& e) {
  const std::string word = j.is_string() ? j.get<std::string>() : "";
  e.kind = word == "environment" ? RankEnd::Kind::environment
           : word == "reference" ? RankEnd::Kind::reference
                                 : RankEnd::Kind::verdict;
  e.status = status_of(word);
}
void to_json(nlohmann::json& j, const RankEnd& e) {
  j = e.kind == RankEnd::Kind::environment ? "environment"
      : e.kind == RankEnd::Kind::reference ? "reference"
                                           : sandbox::enum_name(e.status);
}

Reports read_reports(const EvalSpec& spec) {
  Reports out(static_cast<size_t>(spec.world));
  for (int r = 0; r < spec.world; ++r) {
    nlohmann::json j = nlohmann::json::parse(
        read_text(fmt::format("{}/rank{}.json", spec.work_dir, r)), nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    try {
      out[static_cast<size_t>(r)] = j.get<RankReport>();
    } catch (const nlohmann::json::exception&) {
    }
  }
  return out;
}

}  // namespace pkb
