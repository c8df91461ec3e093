#pragma once
// For tests: a Model from its fields, in the order docs/model.md gives them.
#include <cstdint>

#include "relsim/core/model.hpp"

namespace relsim::test {

inline Model model_of(double p, double q, std::int64_t b = 0, std::int64_t g = 0,
                      ChainScope chain = ChainScope::fresh) {
  Model m;
  m.p = p;
  m.q = q;
  m.b = b;
  m.g = g;
  m.chain = chain;
  return m;
}

}  // namespace relsim::test
