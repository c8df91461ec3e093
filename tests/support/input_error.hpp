#pragma once
// For tests of bad input: the message of the InputError a call throws, and
// what it must say.
#include <exception>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "relsim/core/error.hpp"

namespace relsim::test {

// The InputError message of `f`, or "" (with a test failure) when it did not throw one.
template <class F>
std::string input_error(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw something other than InputError: " << e.what();
    return "";
  }
  ADD_FAILURE() << "did not throw";
  return "";
}

// Checks that `message` is one line and contains each of `words`.
inline void expect_mentions(const std::string& message, const std::vector<std::string>& words) {
  EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
  for (const auto& w : words) EXPECT_NE(message.find(w), std::string::npos) << "'" << w << "' missing in: " << message;
}

}  // namespace relsim::test
