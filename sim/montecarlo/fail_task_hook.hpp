#pragma once
// Internal, for tests only: with RELSIM_TEST_FAIL_TASK=N in the environment,
// simulate() raises an internal error (a std::logic_error, as a failed
// RELSIM_ASSERT does) where it takes up task N, inside its OpenMP region.
// tests/e2e/parallel_error_test.cpp uses it to see that such an error leaves
// relsim as one line on stderr and exit code 3, not as std::terminate.
//
// The variable is read once per simulate() call; unset, or not a task index
// (digits only), it does nothing. Checked once per chunk of tasks or lane,
// before its tasks, never per request: it costs one comparison per chunk.
#include <cstdint>

namespace relsim::detail {

class FailTaskHook {
 public:
  static FailTaskHook from_environment();

  // Throws when the hook's task is one of first, first + stride, ...
  // (count of them).
  void check(std::uint64_t first, std::uint64_t stride, std::int64_t count) const {
    if (task_ >= 0) fail_if_among(first, stride, count);
  }

 private:
  void fail_if_among(std::uint64_t first, std::uint64_t stride, std::int64_t count) const;
  std::int64_t task_ = -1;  // -1: no hook
};

}  // namespace relsim::detail
