// src/llm/pricing.cpp: see pricing.h.
#include "llm/pricing.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kf_build_paths.h"
#include "llm/provider.h"

namespace llm {

using nlohmann::json;

bool PriceTable::load(const std::string& path, std::string* err) {
  std::ifstream in(path);
  if (!in) {
    *err = fmt::format(
        "{}: cannot read the price file: check the path (--config's "
        "prices_file, or KFORGE_PRICES)",
        path);
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path, err);
}

bool PriceTable::parse(const std::string& text, const std::string& source, std::string* err) {
  json j = json::parse(text, nullptr, false, /*ignore_comments=*/true);
  if (j.is_discarded() || !j.is_object() || !j.contains("models") || !j["models"].is_object()) {
    *err = fmt::format(
        "{}: not a price file: expected a JSON object with a \"models\" "
        "object of {{\"input\": USD/Mtok, \"output\": USD/Mtok}}",
        source);
    return false;
  }
  std::map<std::string, Price> prices;
  for (auto& [name, v] : j["models"].items()) {
    if (name.empty() || name[0] == '_') continue;
    auto num = [&](const char* f, double dflt, double* out) {
      if (!v.contains(f)) {
        *out = dflt;
        return true;
      }
      if (!v[f].is_number() || v[f].get<double>() < 0) {
        *err = fmt::format(
            "{}: models.\"{}\".{} must be a non-negative number (USD per "
            "million tokens)",
            source, name, f);
        return false;
      }
      *out = v[f].get<double>();
      return true;
    };
    if (!v.is_object() || !v.contains("input") || !v.contains("output")) {
      *err = fmt::format(
          "{}: models.\"{}\" needs \"input\" and \"output\" prices (USD per "
          "million tokens)",
          source, name);
      return false;
    }
    Price p;
    if (!num("input", 0, &p.input) || !num("output", 0, &p.output) ||
        !num("cache_read", -1, &p.cache_read) || !num("cache_write", -1, &p.cache_write))
      return false;
    prices[name] = p;
  }
  multipliers_.clear();
  if (j.contains("cache_multipliers") && !parse_multipliers(j["cache_multipliers"], source, err))
    return false;
  prices_ = std::move(prices);
  source_ = source;
  return true;
}

const Price* PriceTable::find(const std::string& provider, const std::string& model) const {
  auto it = prices_.find(provider + ":" + model);
  if (it == prices_.end()) it = prices_.find(model);
  return it == prices_.end() ? nullptr : &it->second;
}

double PriceTable::cost(const std::string& provider, const std::string& model, const Usage& u,
                        std::string* note) const {
  const Price* p = find(provider, model);
  if (!p) {
    *note = fmt::format("no price for \"{}\" in {}: cost counted as 0 (add it there)", model,
                        source_.empty() ? "the price table" : source_);
    return 0;
  }
  Price r = resolved(provider, *p);
  int64_t plain = u.input_tokens - u.cache_read_tokens - u.cache_write_tokens;
  if (plain < 0) plain = 0;
  return (plain * r.input + u.cache_read_tokens * r.cache_read +
          u.cache_write_tokens * r.cache_write + u.output_tokens * r.output) /
         1e6;
}

Price PriceTable::resolved(const std::string& provider, const Price& p) const {
  // Unpriced cache tokens: the provider's published multipliers where the file has
  // them; otherwise the input price, since a discount (if any) is not known here.
  auto it = multipliers_.find(provider);
  Multipliers m = it == multipliers_.end() ? Multipliers{} : it->second;
  Price r = p;
  if (r.cache_read < 0) r.cache_read = m.read * p.input;
  if (r.cache_write < 0) r.cache_write = m.write * p.input;
  return r;
}

bool PriceTable::parse_multipliers(const json& j, const std::string& source, std::string* err) {
  auto bad = [&](const std::string& where) {
    *err = fmt::format(
        "{}: cache_multipliers{} must be {{\"PROVIDER\": {{\"cache_read\": X, "
        "\"cache_write\": Y}}}}, non-negative multipliers of the input price",
        source, where);
    return false;
  };
  if (!j.is_object()) return bad("");
  for (auto& [provider, v] : j.items()) {
    if (provider.empty() || provider[0] == '_') continue;
    if (!v.is_object()) return bad(".\"" + provider + "\"");
    Multipliers m;
    for (auto [field, out] : {std::pair{"cache_read", &m.read}, {"cache_write", &m.write}}) {
      if (!v.contains(field)) continue;
      if (!v[field].is_number() || v[field].get<double>() < 0)
        return bad(".\"" + provider + "\"." + field);
      *out = v[field].get<double>();
    }
    multipliers_[provider] = m;
  }
  return true;
}

std::string default_prices_path() {
  if (const char* e = std::getenv("KFORGE_PRICES"); e && *e) return e;
  return std::string(KF_SOURCE_ROOT) + "/config/prices.json";
}

}  // namespace llm
