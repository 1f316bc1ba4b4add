// sandbox/job.cpp: JSON conversion of the kforge <-> kforge-rank contract, and the
// small file helpers both sides use.
#include "job.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace sandbox {

using nlohmann::json;

namespace {
// Reads j[key] into v when present; leaves the default otherwise.
template <class T>
void opt(const json& j, const char* key, T& v) {
  auto it = j.find(key);
  if (it != j.end() && !it->is_null()) it->get_to(v);
}
}  // namespace

bool parse_dtype(const std::string& s, kf::DType* out) {
  static const std::pair<const char*, kf::DType> names[] = {
      {"f32", kf::DType::f32},       {"fp32", kf::DType::f32},      {"float32", kf::DType::f32},
      {"f16", kf::DType::f16},       {"fp16", kf::DType::f16},      {"float16", kf::DType::f16},
      {"bf16", kf::DType::bf16},     {"bfloat16", kf::DType::bf16}, {"f64", kf::DType::f64},
      {"fp64", kf::DType::f64},      {"float64", kf::DType::f64},   {"i32", kf::DType::i32},
      {"int32", kf::DType::i32},     {"i64", kf::DType::i64},       {"int64", kf::DType::i64},
      {"u8", kf::DType::u8},         {"uint8", kf::DType::u8},      {"e4m3", kf::DType::e4m3},
      {"fp8_e4m3", kf::DType::e4m3}, {"e5m2", kf::DType::e5m2},     {"fp8_e5m2", kf::DType::e5m2},
  };
  for (auto& [n, t] : names)
    if (s == n) {
      *out = t;
      return true;
    }
  return false;
}

const char* dtype_name(kf::DType t) {
  switch (t) {
    case kf::DType::f32:
      return "fp32";
    case kf::DType::f16:
      return "fp16";
    case kf::DType::bf16:
      return "bf16";
    case kf::DType::f64:
      return "fp64";
    case kf::DType::i32:
      return "int32";
    case kf::DType::i64:
      return "int64";
    case kf::DType::u8:
      return "uint8";
    case kf::DType::e4m3:
      return "fp8_e4m3";
    case kf::DType::e5m2:
      return "fp8_e5m2";
  }
  return "?";
}

// JSON has no NaN or infinity, and a poisoned output reads as NaN: such values travel
// as the strings "nan", "inf" and "-inf".
static json number_json(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}
static double json_number(const json& j) {
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (s == "inf") return HUGE_VAL;
    if (s == "-inf") return -HUGE_VAL;
    return NAN;
  }
  return j.is_number() ? j.get<double>() : NAN;
}

void to_json(json& j, const Failure::Bad& v) {
  j = json{{"index", v.index}, {"got", number_json(v.got)}, {"want", number_json(v.want)}};
}
void from_json(const json& j, Failure::Bad& v) {
  opt(j, "index", v.index);
  if (j.contains("got")) v.got = json_number(j["got"]);
  if (j.contains("want")) v.want = json_number(j["want"]);
}

void to_json(json& j, const Failure& v) {
  j = json{{"kind", v.kind},
           {"who", v.who},
           {"message", v.message},
           {"phase", v.phase},
           {"tensor", v.tensor},
           {"trial", v.trial},
           {"call", v.call},
           {"bad_count", v.bad_count},
           {"total", v.total},
           {"max_abs", number_json(v.max_abs)},
           {"max_rel", number_json(v.max_rel)},
           {"input_modified", v.input_modified},
           {"first_bad", v.first_bad}};
}
void from_json(const json& j, Failure& v) {
  opt(j, "kind", v.kind);
  opt(j, "who", v.who);
  opt(j, "message", v.message);
  opt(j, "phase", v.phase);
  opt(j, "tensor", v.tensor);
  opt(j, "trial", v.trial);
  opt(j, "call", v.call);
  opt(j, "bad_count", v.bad_count);
  opt(j, "total", v.total);
  if (j.contains("max_abs")) v.max_abs = json_number(j["max_abs"]);
  if (j.contains("max_rel")) v.max_rel = json_number(j["max_rel"]);
  opt(j, "input_modified", v.input_modified);
  opt(j, "first_bad", v.first_bad);
}

bool read_json_file(const std::string& path, json* out, std::string* err) {
  std::ifstream in(path);
  if (!in) {
    *err = path + ": cannot open";
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    *out = json::parse(ss.str());
  } catch (const json::parse_error& e) {
    *err = path + ": not valid JSON: " + e.what();
    return false;
  }
  return true;
}

bool write_json_file(const std::string& path, const json& j, std::string* err) {
  std::string tmp = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp);
    if (!out) {
      *err = tmp + ": cannot create";
      return false;
    }
    out << j.dump(2) << "\n";
    if (!out.flush()) {
      *err = tmp + ": write failed";
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    *err = path + ": rename failed";
    return false;
  }
  return true;
}

}  // namespace sandbox

namespace kf {
void to_json(nlohmann::json& j, DType t) {
  j = sandbox::dtype_name(t);
}
void from_json(const nlohmann::json& j, DType& t) {
  const std::string name = j.get<std::string>();
  if (!sandbox::parse_dtype(name, &t)) throw std::runtime_error("unknown dtype " + name);
}
}  // namespace kf
