// tests/oracle_fake.h: an oracle's view of the ranks (sandbox::OracleIO) over plain maps,
// for the problems' oracle tests: every rank's inputs and shapes by name, and this rank's
// expected outputs, which a test sizes (and may poison) before running the oracle.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "oracle.h"

struct OracleFake {
  std::map<std::string, std::vector<std::vector<double>>> in;
  std::map<std::string, std::vector<std::vector<int64_t>>> shapes;
  std::map<std::string, std::vector<double>> outs;
  sandbox::OracleIO io;

  OracleFake(int world, int rank) {
    io.world = world;
    io.rank = rank;
    io.input = [this](const std::string& name, int r) -> const std::vector<double>& {
      return in.at(name).at(static_cast<size_t>(r));
    };
    io.shape = [this](const std::string& name, int r) -> const std::vector<int64_t>& {
      return shapes.at(name).at(static_cast<size_t>(r));
    };
    io.out = [this](const std::string& name) -> std::vector<double>& { return outs.at(name); };
  }
  // The lambdas hold `this`: a copy would read the original's maps.
  OracleFake(const OracleFake&) = delete;
  OracleFake& operator=(const OracleFake&) = delete;
};
