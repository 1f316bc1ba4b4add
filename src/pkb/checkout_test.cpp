// pkb/checkout_test.cpp: opening a PKB-shaped checkout and selecting its problems.
#include "pkb/checkout.h"

#include <doctest/doctest.h>

#include <filesystem>

#include "pkb/test_util.h"

namespace {
std::vector<int> numbers(const pkb::Checkout& c, const std::string& spec) {
  std::vector<pkb::Problem> ps;
  std::string err;
  if (!pkb::select_problems(c, spec, &ps, &err)) return {-1};
  std::vector<int> out;
  for (auto& p : ps) out.push_back(p.number);
  return out;
}
}  // namespace

TEST_CASE("pkb checkout: lists the 87 problems by number") {
  pkb::test::FakeCheckout f;
  pkb::Checkout c;
  std::string err;
  REQUIRE_MESSAGE(pkb::open_checkout(f.root, &c, &err), err);
  REQUIRE(c.problems.size() == 87);
  CHECK(c.problems[0].number == 1);
  CHECK(c.problems[1].number == 2);  // numeric order, not 1, 10, 11, ...
  CHECK(c.problems[86].name == "87_op87");
  CHECK(c.problems[15].reference == f.root + "/reference/16_op16.py");
}

TEST_CASE("pkb checkout: a folder that is not one is named with the file expected") {
  pkb::test::FakeCheckout f;
  std::string err;
  pkb::Checkout c;
  CHECK_FALSE(pkb::open_checkout(f.root + "/nowhere", &c, &err));
  CHECK(err.find(f.root + "/nowhere") != std::string::npos);
  std::filesystem::remove(f.root + "/run_local.py");
  CHECK_FALSE(pkb::open_checkout(f.root, &c, &err));
  CHECK(err.find("run_local.py") != std::string::npos);
  CHECK(err.find(f.root) != std::string::npos);
  f.write("run_local.py", "");
  std::filesystem::remove_all(f.root + "/reference");
  CHECK_FALSE(pkb::open_checkout(f.root, &c, &err));
  CHECK(err.find("reference") != std::string::npos);
}

TEST_CASE("pkb checkout: select by number, name, all, ranges and PKB's bracket lists") {
  pkb::test::FakeCheckout f;
  pkb::Checkout c;
  std::string err;
  REQUIRE(pkb::open_checkout(f.root, &c, &err));
  CHECK(numbers(c, "16") == std::vector<int>{16});
  CHECK(numbers(c, "16_op16") == std::vector<int>{16});
  CHECK(numbers(c, "16_op16.py") == std::vector<int>{16});
  CHECK(numbers(c, "all").size() == 87);
  CHECK(numbers(c, "1-5,16") == std::vector<int>{1, 2, 3, 4, 5, 16});
  CHECK(numbers(c, "[20, 21, 22]") == std::vector<int>{20, 21, 22});
  CHECK(numbers(c, "3,1,3") == std::vector<int>{1, 3});
  std::vector<pkb::Problem> ps;
  CHECK_FALSE(pkb::select_problems(c, "88", &ps, &err));
  CHECK(err.find("'88'") != std::string::npos);
  CHECK_FALSE(pkb::select_problems(c, "5-1", &ps, &err));
  CHECK_FALSE(pkb::select_problems(c, "1,,2", &ps, &err));
  pkb::Problem p;
  CHECK(pkb::find_problem(c, "7", &p, &err));
  CHECK(p.name == "7_op7");
  CHECK_FALSE(pkb::find_problem(c, "1-2", &p, &err));
}
