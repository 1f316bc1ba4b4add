// sandbox/enum_names.h: one table of names per enum, so that every enum of the job and
// verdict contracts reads and writes the same strings as before it was typed, and an
// unknown string is an error that names the value and the accepted ones.
//
// Not NLOHMANN_JSON_SERIALIZE_ENUM: that macro reads an unknown string as the table's
// first value, and a verdict.json or job.json with a typo must not read as "rejected".
#pragma once

#include <cstddef>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sandbox {

// Specialized next to each enum: `what` (the field's name in messages) and `names`,
// indexed by the enum's value (its values count from 0 with no gaps).
template <class E>
struct EnumNames;

template <class E>
const char* enum_name(E e) {
  auto i = static_cast<size_t>(e);
  return i < std::size(EnumNames<E>::names) ? EnumNames<E>::names[i] : "?";
}

template <class E>
bool parse_enum(std::string_view s, E* out) {
  for (size_t i = 0; i < std::size(EnumNames<E>::names); ++i)
    if (s == EnumNames<E>::names[i]) {
      *out = static_cast<E>(i);
      return true;
    }
  return false;
}

// "cuda | host"
template <class E>
std::string enum_choices() {
  std::string s;
  for (const char* n : EnumNames<E>::names) s += (s.empty() ? "" : " | ") + std::string(n);
  return s;
}

template <class E>
void enum_from_json(const nlohmann::json& j, E& e) {
  if (j.is_string() && parse_enum(j.get_ref<const std::string&>(), &e)) return;
  throw std::runtime_error(std::string("unknown ") + EnumNames<E>::what + " " + j.dump() +
                           " (expected " + enum_choices<E>() + ")");
}

}  // namespace sandbox

// to_json / from_json for enum E, found by nlohmann through argument-dependent lookup:
// use inside E's namespace.
#define KF_ENUM_JSON(E)                                  \
  inline void to_json(nlohmann::json& j, E e) {          \
    j = ::sandbox::enum_name(e);                         \
  }                                                      \
  inline void from_json(const nlohmann::json& j, E& e) { \
    ::sandbox::enum_from_json(j, e);                     \
  }
