#include "suite/expr.h"

#include <doctest/doctest.h>

namespace {

double ev(const std::string& s, const suite::Vars& vars = {}) {
  double v = -12345;
  std::string err;
  bool ok = suite::eval_expr(s, vars, &v, &err);
  INFO(s, ": ", err);
  CHECK(ok);
  return v;
}

std::string ev_err(const std::string& s, const suite::Vars& vars = {}) {
  double v = 0;
  std::string err;
  CHECK_FALSE(suite::eval_expr(s, vars, &v, &err));
  return err;
}

}  // namespace

TEST_CASE("suite: expr numbers and arithmetic precedence") {
  CHECK(ev("4099") == 4099);
  CHECK(ev("0.5") == 0.5);
  CHECK(ev(".25") == 0.25);
  CHECK(ev("1e-3") == 0.001);
  CHECK(ev("2^20") == 1048576);
  CHECK(ev("64 * 2^20") == 67108864);
  CHECK(ev("1 + 2 * 3") == 7);
  CHECK(ev("(1 + 2) * 3") == 9);
  CHECK(ev("10 - 4 - 3") == 3);  // left-associative
  CHECK(ev("64 / 4 / 2") == 8);
  CHECK(ev("2^3^2") == 512);  // right-associative
  CHECK(ev("-2^2") == -4);    // unary minus is looser than ^
  CHECK(ev("2^-1") == 0.5);
  CHECK(ev("--3") == 3);
  CHECK(ev("7 / 2") == 3.5);  // exact division
  CHECK(ev("7 // 2") == 3);
  CHECK(ev("-7 // 2") == -4);  // floors like Python
  CHECK(ev("7 % 3") == 1);
  CHECK(ev("-7 % 3") == 2);
  CHECK(ev("2 * 7 % 4") == 2);  // same level as *, left to right
  CHECK(ev("2 + 3 * 4 ^ 2") == 50);
}

TEST_CASE("suite: expr comparisons, logic and functions") {
  CHECK(ev("1 < 2") == 1);
  CHECK(ev("2 <= 1") == 0);
  CHECK(ev("3 == 3 && 2 != 2") == 0);
  CHECK(ev("3 == 3 || 2 != 2") == 1);
  CHECK(ev("1 + 1 == 2") == 1);   // arithmetic binds tighter than ==
  CHECK(ev("0 || 0 && 1") == 0);  // && binds tighter than ||
  CHECK(ev("1 || 0 && 0") == 1);
  CHECK(ev("!0") == 1);
  CHECK(ev("!(2 > 1)") == 0);
  CHECK(ev("min(3, 1, 2)") == 1);
  CHECK(ev("max(3, 1, 2)") == 3);
  CHECK(ev("ceil_div(10, 4)") == 3);
  CHECK(ev("ceil_div(8, 4)") == 2);
  CHECK(ev("ceil_div(-7, 2)") == -3);
  CHECK(ev("floor(2.7)") == 2);
  CHECK(ev("ceil(2.1)") == 3);
  CHECK(ev("log2(1024)") == 10);
  CHECK(ev("max(1, min(5, 2 * 2))") == 4);
}

TEST_CASE("suite: expr variables and short-circuit") {
  suite::Vars v{{"n", 4096}, {"world", 8}, {"x_bytes", 16384}};
  CHECK(ev("n % world == 0", v) == 1);
  CHECK(ev("2 * (world - 1) / world * x_bytes", v) == 28672);
  CHECK(ev("n / world", v) == 512);
  // The right side would divide by zero at world 1; || must not evaluate it.
  CHECK(ev("world == 1 || n / (world - 1) > 2", {{"n", 4}, {"world", 1}}) == 1);
  CHECK(ev("world > 1 && n / (world - 1) > 2", {{"n", 4}, {"world", 1}}) == 0);

  suite::Expr e;
  std::string err;
  REQUIRE(e.parse("min(n, world) * rank + max_tokens", &err));
  std::set<std::string> names;
  e.names(&names);
  CHECK(names == std::set<std::string>{"max_tokens", "n", "rank", "world"});
  double out = 0;
  CHECK(e.eval({{"n", 4}, {"world", 2}, {"rank", 3}, {"max_tokens", 1}}, &out, &err));
  CHECK(out == 7);
}

TEST_CASE("suite: expr errors say what and at which column") {
  std::string e = ev_err("n % wrld", {{"n", 4}, {"world", 2}, {"rank", 0}});
  CHECK(e.find("column 5") != std::string::npos);
  CHECK(e.find("unknown name 'wrld'") != std::string::npos);
  CHECK(e.find("known: n, rank, world") != std::string::npos);
  CHECK(e.find("\"n % wrld\"") != std::string::npos);

  e = ev_err("1 + * 2");
  CHECK(e.find("column 5") != std::string::npos);
  CHECK(e.find("'*'") != std::string::npos);

  e = ev_err("(1 + 2");
  CHECK(e.find("column 7") != std::string::npos);
  CHECK(e.find("')'") != std::string::npos);

  e = ev_err("1 + 2)");
  CHECK(e.find("column 6") != std::string::npos);

  e = ev_err("n = 4", {{"n", 4}});
  CHECK(e.find("column 3") != std::string::npos);
  CHECK(e.find("'=='") != std::string::npos);

  e = ev_err("a & b");
  CHECK(e.find("'&&'") != std::string::npos);

  e = ev_err("1 < 2 < 3");
  CHECK(e.find("do not chain") != std::string::npos);

  e = ev_err("foo(1)");
  CHECK(e.find("unknown function 'foo'") != std::string::npos);
  CHECK(e.find("column 1") != std::string::npos);

  e = ev_err("2 * min");
  CHECK(e.find("function") != std::string::npos);

  e = ev_err("ceil_div(1)");
  CHECK(e.find("takes 2 arguments, got 1") != std::string::npos);

  e = ev_err("1 / (2 - 2)");
  CHECK(e.find("division by zero") != std::string::npos);
  CHECK(e.find("column 3") != std::string::npos);

  e = ev_err("7.5 % 2");
  CHECK(e.find("integer") != std::string::npos);
  e = ev_err("7 // 0.5");
  CHECK(e.find("integer") != std::string::npos);

  e = ev_err("log2(0)");
  CHECK(e.find("positive") != std::string::npos);

  e = ev_err("2n");
  CHECK(e.find("operator") != std::string::npos);

  e = ev_err("   ");
  CHECK(e.find("empty") != std::string::npos);

  e = ev_err("3 $ 4");
  CHECK(e.find("unexpected character '$'") != std::string::npos);
  CHECK(e.find("column 3") != std::string::npos);

  e = ev_err("10^400");
  CHECK(e.find("finite") != std::string::npos);
}

TEST_CASE("suite: format_number and is_exact_integer") {
  CHECK(suite::format_number(4099) == "4099");
  CHECK(suite::format_number(0.5) == "0.5");
  CHECK(suite::format_number(-3) == "-3");
  CHECK(suite::is_exact_integer(1048576));
  CHECK_FALSE(suite::is_exact_integer(0.5));
  CHECK_FALSE(suite::is_exact_integer(1e300));
}
