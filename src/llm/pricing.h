// src/llm/pricing.h: what a call cost. Prices live in a JSON file (config/prices.json),
// not in code, because they change more often than kforge does; a model without a price
// costs 0 with a note, never a failure.
#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace llm {

struct Usage;

struct Price {
  double input = 0;   // USD per million uncached input tokens
  double output = 0;  // USD per million output tokens (reasoning included)
  // < 0: not in the file: the input price times the provider's multiplier from the
  // file's "cache_multipliers" (Anthropic's 0.1x for a read and 1.25x for a 5-minute
  // write, in the shipped file), or the input price when it names none.
  double cache_read = -1;   // per million cached input tokens
  double cache_write = -1;  // per million cache-creation tokens
};

class PriceTable {
 public:
  // Reads {"models": {"NAME": {"input": X, "output": Y, "cache_read": Z, ...}},
  //  "cache_multipliers": {"PROVIDER": {"cache_read": R, "cache_write": W}}} (the second
  // optional). Keys starting with '_' (comments) and unknown fields are ignored. Return
  // false on error.
  bool load(const std::string& path, std::string* err);
  bool parse(const std::string& text, const std::string& source, std::string* err);
  void set(const std::string& model, const Price& p) { prices_[model] = p; }
  // The multipliers of the input price for `provider`'s cache tokens (see Price).
  void set_cache_multipliers(const std::string& provider, double read, double write) {
    multipliers_[provider] = {read, write};
  }

  // "together:meta-llama/X" is looked up as written, then as "meta-llama/X", so one
  // file can price the same name differently per provider.
  const Price* find(const std::string& provider, const std::string& model) const;

  // USD for the usage; 0 with *note set when the model has no price.
  double cost(const std::string& provider, const std::string& model, const Usage& u,
              std::string* note) const;

  // p with its cache prices filled in where the file left them out (see Price): what a
  // call through `provider` is charged.
  Price resolved(const std::string& provider, const Price& p) const;

  const std::string& source() const { return source_; }

 private:
  struct Multipliers {
    double read = 1, write = 1;
  };
  bool parse_multipliers(const nlohmann::json& j, const std::string& source, std::string* err);

  std::map<std::string, Price> prices_;
  std::map<std::string, Multipliers> multipliers_;
  std::string source_;
};

// The price file kforge uses when none is configured: $KFORGE_PRICES, else
// config/prices.json in the source tree.
std::string default_prices_path();

}  // namespace llm
