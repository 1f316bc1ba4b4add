// src/sweep/json_optional.h: std::optional<T> as JSON (null when empty), for the sweep's
// JSON contracts: this nlohmann (3.11, Debian 12) has no serializer of its own for it.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

NLOHMANN_JSON_NAMESPACE_BEGIN
template <typename T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& v) {
    if (v)
      j = *v;
    else
      j = nullptr;
  }
  static void from_json(const json& j, std::optional<T>& v) {
    if (j.is_null())
      v.reset();
    else
      v = j.get<T>();
  }
};
NLOHMANN_JSON_NAMESPACE_END
