// suite/expr.h: the expression language of problem.json (problems/README.md,
// "Expressions"). Shapes, constraints, cost models and busbw are written in it.
//
//   numbers   4099  0.5  1e-3  (2^20 is a power, not a literal)
//   names     parameters, world, rank, dsize, <tensor>_numel, <tensor>_bytes
//   operators || && (lowest), == != < <= > >=, + -, * / % //, unary - ! +, ^ (highest,
//             right-associative; -2^2 is -4, 2^-1 is 0.5)
//   functions min(a, b, ...) max(a, b, ...) ceil_div(a, b) floor(x) ceil(x) log2(x)
//
// Values are doubles, exact for integers below 2^53. `/` is exact division; `%` and `//`
// need integer operands and floor like Python's (so -7 // 2 == -4). Comparisons and
// logic give 1 or 0; `&&` and `||` short-circuit, so `world == 1 || x / (world - 1) > 2`
// is safe at world 1.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

namespace suite {

using Vars = std::map<std::string, double>;

// A parsed expression: parse once, evaluate per rank and per instance.
class Expr {
 public:
  struct Node;

  // Parses `text`; on error `err` says what is wrong and at which column (1-based).
  bool parse(const std::string& text, std::string* err);
  // Evaluates with `vars`; an unknown name is an error that lists the names known.
  // Fails on a domain error (division by zero, `%` of a non-integer, log2 of 0, ...).
  bool eval(const Vars& vars, double* out, std::string* err) const;
  // Every variable name the expression mentions (function names excluded).
  void names(std::set<std::string>* out) const;

  const std::string& text() const { return text_; }
  bool empty() const { return root_ == nullptr; }

 private:
  std::string text_;
  std::shared_ptr<const Node> root_;
};

// Parses and evaluates `text` in one go.
bool eval_expr(const std::string& text, const Vars& vars, double* out, std::string* err);

// True when `x` is an integer that a double holds exactly (|x| < 2^53).
bool is_exact_integer(double x);

// A number as a person writes it: 4099, 0.5, 1e-05 (shortest round-trip form).
std::string format_number(double x);

}  // namespace suite
