// suite/expr.cpp: the evaluator of suite::Expr (its parser: expr_parse.cpp).
#include "suite/expr.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "suite/expr_node.h"

namespace suite {

namespace {

using Node = Expr::Node;

constexpr double kTwo53 = 9007199254740992.0;

class Evaluator {
 public:
  Evaluator(const std::string& text, const Vars& vars, std::string* err)
      : text_(text), vars_(vars), err_(err) {}

  bool eval(const Node& n, double* out) {
    switch (n.kind) {
      case Node::Num:
        *out = n.value;
        return true;
      case Node::Var: {
        auto it = vars_.find(n.op);
        if (it == vars_.end()) {
          std::string known;
          for (auto& [k, v] : vars_) known += (known.empty() ? "" : ", ") + k;
          return fail(n.col, fmt::format("unknown name '{}' (known: {})", n.op,
                                         known.empty() ? "none" : known));
        }
        *out = it->second;
        return true;
      }
      case Node::Unary: {
        double a;
        if (!eval(*n.args[0], &a)) return false;
        *out = n.op == "-" ? -a : n.op == "+" ? a : (a == 0 ? 1.0 : 0.0);
        return true;
      }
      case Node::Binary:
        return binary(n, out);
      case Node::Call:
        return call(n, out);
    }
    return false;
  }

 private:
  bool fail(int col, const std::string& msg) {
    *err_ = expr_where(text_, col) + ": " + msg;
    return false;
  }

  bool need_int(const Node& n, double v, const char* what) {
    if (is_exact_integer(v)) return true;
    return fail(n.col, fmt::format("{} needs integer operands, got {}", what, format_number(v)));
  }

  bool binary(const Node& n, double* out) {
    const std::string& op = n.op;
    double a, b;
    if (!eval(*n.args[0], &a)) return false;
    if (op == "&&" || op == "||") {  // short-circuit
      bool av = a != 0;
      if (op == "&&" && !av) return (*out = 0, true);
      if (op == "||" && av) return (*out = 1, true);
      if (!eval(*n.args[1], &b)) return false;
      *out = b != 0 ? 1 : 0;
      return true;
    }
    if (!eval(*n.args[1], &b)) return false;
    if (op == "+")
      *out = a + b;
    else if (op == "-")
      *out = a - b;
    else if (op == "*")
      *out = a * b;
    else if (op == "/") {
      if (b == 0) return fail(n.col, "division by zero");
      *out = a / b;
    } else if (op == "%" || op == "//") {
      if (!need_int(n, a, op.c_str()) || !need_int(n, b, op.c_str())) return false;
      if (b == 0) return fail(n.col, op == "%" ? "modulo by zero" : "division by zero");
      auto ia = static_cast<int64_t>(a), ib = static_cast<int64_t>(b);
      int64_t q = ia / ib, r = ia % ib;
      if (r != 0 && ((r < 0) != (ib < 0))) --q, r += ib;  // floor, as Python does
      *out = static_cast<double>(op == "%" ? r : q);
    } else if (op == "^") {
      *out = std::pow(a, b);
    } else if (op == "==")
      *out = a == b;
    else if (op == "!=")
      *out = a != b;
    else if (op == "<")
      *out = a < b;
    else if (op == "<=")
      *out = a <= b;
    else if (op == ">")
      *out = a > b;
    else if (op == ">=")
      *out = a >= b;
    else
      return fail(n.col, "internal error: unknown operator " + op);
    if (!std::isfinite(*out))
      return fail(n.col, fmt::format("{} {} {} is not a finite number", format_number(a), op,
                                     format_number(b)));
    return true;
  }

  bool call(const Node& n, double* out) {
    std::vector<double> v(n.args.size());
    for (size_t i = 0; i < n.args.size(); ++i)
      if (!eval(*n.args[i], &v[i])) return false;
    const std::string& f = n.op;
    if (f == "min" || f == "max") {
      double r = v[0];
      for (double x : v) r = f == "min" ? std::min(r, x) : std::max(r, x);
      *out = r;
    } else if (f == "ceil_div") {
      if (!need_int(n, v[0], "ceil_div") || !need_int(n, v[1], "ceil_div")) return false;
      if (v[1] == 0) return fail(n.col, "ceil_div by zero");
      auto a = static_cast<int64_t>(v[0]), b = static_cast<int64_t>(v[1]);
      int64_t q = a / b, r = a % b;
      if (r != 0 && ((r < 0) == (b < 0))) ++q;  // ceiling
      *out = static_cast<double>(q);
    } else if (f == "floor") {
      *out = std::floor(v[0]);
    } else if (f == "ceil") {
      *out = std::ceil(v[0]);
    } else if (f == "log2") {
      if (v[0] <= 0)
        return fail(n.col,
                    fmt::format("log2 of {}: the argument must be positive", format_number(v[0])));
      *out = std::log2(v[0]);
    } else {
      return fail(n.col, "internal error: unknown function " + f);
    }
    return true;
  }

  const std::string& text_;
  const Vars& vars_;
  std::string* err_;
};

void collect_names(const Node& n, std::set<std::string>* out) {
  if (n.kind == Node::Var) out->insert(n.op);
  for (auto& a : n.args) collect_names(*a, out);
}

}  // namespace

bool Expr::eval(const Vars& vars, double* out, std::string* err) const {
  if (!root_) {
    *err = fmt::format("\"{}\" was not parsed", text_);
    return false;
  }
  Evaluator ev(text_, vars, err);
  double v;
  if (!ev.eval(*root_, &v)) return false;
  if (!std::isfinite(v)) {
    *err = fmt::format("\"{}\" is not a finite number", text_);
    return false;
  }
  *out = v;
  return true;
}

void Expr::names(std::set<std::string>* out) const {
  if (root_) collect_names(*root_, out);
}

bool eval_expr(const std::string& text, const Vars& vars, double* out, std::string* err) {
  Expr e;
  return e.parse(text, err) && e.eval(vars, out, err);
}

bool is_exact_integer(double x) {
  return std::isfinite(x) && std::fabs(x) < kTwo53 && std::floor(x) == x;
}

std::string format_number(double x) {
  if (is_exact_integer(x)) return fmt::format("{}", static_cast<int64_t>(x));
  return fmt::format("{}", x);
}

}  // namespace suite
