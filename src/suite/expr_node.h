// suite/expr_node.h: the parsed form of a suite::Expr, shared by its parser
// (expr_parse.cpp) and its evaluator (expr.cpp). Internal to src/suite.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "suite/expr.h"

namespace suite {

struct Expr::Node {
  enum Kind { Num, Var, Unary, Binary, Call };
  Kind kind = Num;
  std::string op;  // operator, function or variable name
  double value = 0;
  int col = 1;  // 1-based column of the token that made this node
  std::vector<std::unique_ptr<Node>> args;
};

// "column 3 of \"n + \"": where an error points in an expression's text.
std::string expr_where(const std::string& text, int col);

}  // namespace suite
