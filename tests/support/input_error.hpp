#pragma once
// For tests of bad input: the message of the InputError a call throws.
#include <exception>
#include <string>

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

}  // namespace relsim::test
