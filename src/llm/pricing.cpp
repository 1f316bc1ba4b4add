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
  Price r = resolved_price(*p, provider);
  double cr = r.cache_read, cw = r.cache_write;
  int64_t plain = u.input_tokens - u.cache_read_tokens - u.cache_write_tokens;
  if (plain < 0) plain = 0;
  return (plain * p->input + u.cache_read_tokens * cr + u.cache_write_tokens * cw +
          u.output_tokens * p->output) /
         1e6;
}

Price resolved_price(const Price& p, const std::string& provider) {
  // Unpriced cache tokens: Anthropic's published multipliers on its wire (a read 0.1x
  // the input price, a 5-minute cache write 1.25x); elsewhere the input price, since an
  // OpenAI-compatible server's discount (if any) is not known here.
  ProviderDefaults d;
  bool anthropic = provider_defaults(provider, &d) && d.wire == "anthropic";
  Price r = p;
  if (r.cache_read < 0) r.cache_read = anthropic ? 0.1 * p.input : p.input;
  if (r.cache_write < 0) r.cache_write = anthropic ? 1.25 * p.input : p.input;
  return r;
}

std::string default_prices_path() {
  if (const char* e = std::getenv("KFORGE_PRICES"); e && *e) return e;
  return std::string(KF_SOURCE_ROOT) + "/config/prices.json";
}

}  // namespace llm
