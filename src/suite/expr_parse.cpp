// suite/expr_parse.cpp: tokenizer and recursive-descent parser for suite::Expr (the
// grammar is problems/README.md's "Expressions").
#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <vector>

#include "suite/expr.h"
#include "suite/expr_node.h"

namespace suite {

namespace {

using Node = Expr::Node;

struct Func {
  const char* name;
  int min_args, max_args;  // max_args < 0: any number
};
const Func kFuncs[] = {{"min", 1, -1},  {"max", 1, -1}, {"ceil_div", 2, 2},
                       {"floor", 1, 1}, {"ceil", 1, 1}, {"log2", 1, 1}};

const Func* find_func(const std::string& name) {
  for (const Func& f : kFuncs)
    if (name == f.name) return &f;
  return nullptr;
}

struct Token {
  enum Kind { Num, Name, Op, LParen, RParen, Comma, End };
  Kind kind = End;
  std::string text;
  double value = 0;
  int col = 1;
};

bool tokenize(const std::string& s, std::vector<Token>* out, std::string* err) {
  static const char* two_char_ops[] = {"//", "==", "!=", "<=", ">=", "&&", "||"};
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    int col = static_cast<int>(i) + 1;
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    Token t;
    t.col = col;
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      size_t j = i;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      if (j < s.size() && s[j] == '.') {
        ++j;
        while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      }
      if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
        size_t k = j + 1;
        if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
        if (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) {
          while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) ++k;
          j = k;
        }
      }
      if (j < s.size() && (std::isalpha(static_cast<unsigned char>(s[j])) || s[j] == '_')) {
        *err = expr_where(s, static_cast<int>(j) + 1) +
               ": a number runs into a name; put an operator between them (e.g. 2 * n)";
        return false;
      }
      t.kind = Token::Num;
      t.text = s.substr(i, j - i);
      t.value = std::strtod(t.text.c_str(), nullptr);
      i = j;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      t.kind = Token::Name;
      t.text = s.substr(i, j - i);
      i = j;
    } else if (c == '(') {
      t.kind = Token::LParen, t.text = "(", ++i;
    } else if (c == ')') {
      t.kind = Token::RParen, t.text = ")", ++i;
    } else if (c == ',') {
      t.kind = Token::Comma, t.text = ",", ++i;
    } else {
      bool two = false;
      for (const char* op : two_char_ops)
        if (s.compare(i, 2, op) == 0) two = true;
      if (two) {
        t.kind = Token::Op, t.text = s.substr(i, 2), i += 2;
      } else if (std::string("+-*/%^<>!").find(c) != std::string::npos) {
        t.kind = Token::Op, t.text = std::string(1, c), ++i;
      } else if (c == '=' || c == '&' || c == '|') {
        *err = expr_where(s, col) +
               fmt::format(": '{}' alone is not an operator; did you mean '{}{}'?", c, c, c);
        return false;
      } else {
        *err = expr_where(s, col) + fmt::format(": unexpected character '{}'", c);
        return false;
      }
    }
    out->push_back(std::move(t));
  }
  Token end;
  end.kind = Token::End;
  end.col = static_cast<int>(s.size()) + 1;
  out->push_back(end);
  return true;
}

class Parser {
 public:
  Parser(const std::string& text, std::vector<Token> toks, std::string* err)
      : text_(text), toks_(std::move(toks)), err_(err) {}

  std::unique_ptr<Node> parse_all() {
    auto n = parse_or();
    if (!n) return nullptr;
    if (peek().kind != Token::End) {
      const Token& t = peek();
      if (t.kind == Token::RParen) return fail(t.col, "')' without a matching '('");
      return fail(t.col, fmt::format("unexpected '{}' after a complete expression; "
                                     "is an operator missing?",
                                     t.text));
    }
    return n;
  }

 private:
  const Token& peek() const { return toks_[pos_]; }
  bool is_op(const char* op) const { return peek().kind == Token::Op && peek().text == op; }

  std::unique_ptr<Node> fail(int col, const std::string& msg) {
    if (err_->empty()) *err_ = expr_where(text_, col) + ": " + msg;
    return nullptr;
  }

  static std::unique_ptr<Node> binary(const Token& op, std::unique_ptr<Node> a,
                                      std::unique_ptr<Node> b) {
    auto n = std::make_unique<Node>();
    n->kind = Node::Binary;
    n->op = op.text;
    n->col = op.col;
    n->args.push_back(std::move(a));
    n->args.push_back(std::move(b));
    return n;
  }

  std::unique_ptr<Node> parse_or() {
    auto a = parse_and();
    while (a && is_op("||")) {
      Token op = toks_[pos_++];
      auto b = parse_and();
      if (!b) return nullptr;
      a = binary(op, std::move(a), std::move(b));
    }
    return a;
  }

  std::unique_ptr<Node> parse_and() {
    auto a = parse_cmp();
    while (a && is_op("&&")) {
      Token op = toks_[pos_++];
      auto b = parse_cmp();
      if (!b) return nullptr;
      a = binary(op, std::move(a), std::move(b));
    }
    return a;
  }

  bool at_cmp() const {
    return is_op("==") || is_op("!=") || is_op("<") || is_op("<=") || is_op(">") || is_op(">=");
  }

  std::unique_ptr<Node> parse_cmp() {
    auto a = parse_add();
    if (a && at_cmp()) {
      Token op = toks_[pos_++];
      auto b = parse_add();
      if (!b) return nullptr;
      if (at_cmp()) return fail(peek().col, "comparisons do not chain; write (a < b) && (b < c)");
      a = binary(op, std::move(a), std::move(b));
    }
    return a;
  }

  std::unique_ptr<Node> parse_add() {
    auto a = parse_mul();
    while (a && (is_op("+") || is_op("-"))) {
      Token op = toks_[pos_++];
      auto b = parse_mul();
      if (!b) return nullptr;
      a = binary(op, std::move(a), std::move(b));
    }
    return a;
  }

  std::unique_ptr<Node> parse_mul() {
    auto a = parse_unary();
    while (a && (is_op("*") || is_op("/") || is_op("%") || is_op("//"))) {
      Token op = toks_[pos_++];
      auto b = parse_unary();
      if (!b) return nullptr;
      a = binary(op, std::move(a), std::move(b));
    }
    return a;
  }

  // Unary operators bind looser than `^`: -2^2 == -(2^2).
  std::unique_ptr<Node> parse_unary() {
    if (is_op("-") || is_op("!") || is_op("+")) {
      Token op = toks_[pos_++];
      auto a = parse_unary();
      if (!a) return nullptr;
      auto n = std::make_unique<Node>();
      n->kind = Node::Unary;
      n->op = op.text;
      n->col = op.col;
      n->args.push_back(std::move(a));
      return n;
    }
    return parse_pow();
  }

  // Right-associative: 2^3^2 == 2^(3^2); the exponent may carry a sign: 2^-1.
  std::unique_ptr<Node> parse_pow() {
    auto a = parse_primary();
    if (a && is_op("^")) {
      Token op = toks_[pos_++];
      auto b = parse_unary();
      if (!b) return nullptr;
      a = binary(op, std::move(a), std::move(b));
    }
    return a;
  }

  std::unique_ptr<Node> parse_primary() {
    const Token& t = peek();
    if (t.kind == Token::Num) {
      ++pos_;
      auto n = std::make_unique<Node>();
      n->kind = Node::Num;
      n->value = t.value;
      n->col = t.col;
      return n;
    }
    if (t.kind == Token::LParen) {
      int open_col = t.col;
      ++pos_;
      auto n = parse_or();
      if (!n) return nullptr;
      if (peek().kind != Token::RParen)
        return fail(peek().col,
                    fmt::format("expected ')' to close the '(' at column {}", open_col));
      ++pos_;
      return n;
    }
    if (t.kind == Token::Name) {
      Token name = t;
      ++pos_;
      const Func* f = find_func(name.text);
      if (peek().kind != Token::LParen) {
        if (f)
          return fail(name.col,
                      fmt::format("'{}' is a function; call it as {}(...)", name.text, name.text));
        auto n = std::make_unique<Node>();
        n->kind = Node::Var;
        n->op = name.text;
        n->col = name.col;
        return n;
      }
      if (!f)
        return fail(name.col, fmt::format("unknown function '{}'; the functions are min, max, "
                                          "ceil_div, floor, ceil, log2",
                                          name.text));
      ++pos_;  // (
      auto n = std::make_unique<Node>();
      n->kind = Node::Call;
      n->op = name.text;
      n->col = name.col;
      if (peek().kind != Token::RParen) {
        while (true) {
          auto a = parse_or();
          if (!a) return nullptr;
          n->args.push_back(std::move(a));
          if (peek().kind == Token::Comma) {
            ++pos_;
            continue;
          }
          if (peek().kind == Token::RParen) break;
          return fail(peek().col, fmt::format("expected ',' or ')' in the call of {}", name.text));
        }
      }
      ++pos_;  // )
      int argc = static_cast<int>(n->args.size());
      if (argc < f->min_args || (f->max_args >= 0 && argc > f->max_args)) {
        std::string want = f->max_args < 0 ? fmt::format("at least {}", f->min_args)
                           : f->min_args == f->max_args
                               ? fmt::format("{}", f->min_args)
                               : fmt::format("{} to {}", f->min_args, f->max_args);
        return fail(name.col, fmt::format("{} takes {} argument{}, got {}", name.text, want,
                                          (f->max_args == 1 ? "" : "s"), argc));
      }
      return n;
    }
    if (t.kind == Token::End) return fail(t.col, "the expression ends where a value is expected");
    return fail(t.col, fmt::format("expected a number, a name or '(' but found '{}'", t.text));
  }

  const std::string& text_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  std::string* err_;
};

}  // namespace

std::string expr_where(const std::string& text, int col) {
  return fmt::format("column {} of \"{}\"", col, text);
}

bool Expr::parse(const std::string& text, std::string* err) {
  text_ = text;
  root_.reset();
  std::vector<Token> toks;
  std::string e;
  if (!tokenize(text, &toks, &e)) {
    *err = e;
    return false;
  }
  if (toks.size() == 1) {
    *err = fmt::format("\"{}\" is empty; write an expression such as 2 * n", text);
    return false;
  }
  Parser p(text, std::move(toks), &e);
  auto root = p.parse_all();
  if (!root) {
    *err = e;
    return false;
  }
  root_ = std::move(root);
  return true;
}

}  // namespace suite
