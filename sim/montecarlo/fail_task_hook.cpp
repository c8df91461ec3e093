#include "montecarlo/fail_task_hook.hpp"

#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "relsim/core/parse.hpp"

namespace relsim::detail {

FailTaskHook FailTaskHook::from_environment() {
  FailTaskHook hook;
  const char* text = std::getenv("RELSIM_TEST_FAIL_TASK");
  if (text == nullptr) return hook;
  if (const auto task = parse_number<std::int64_t>(text); task && *task >= 0) hook.task_ = *task;
  return hook;
}

void FailTaskHook::fail_if_among(std::uint64_t first, std::uint64_t stride, std::int64_t count) const {
  const auto task = static_cast<std::uint64_t>(task_);
  if (task < first || (task - first) % stride != 0 || (task - first) / stride >= static_cast<std::uint64_t>(count))
    return;
  throw std::logic_error(fmt::format("task {} failed on purpose (RELSIM_TEST_FAIL_TASK)", task_));
}

}  // namespace relsim::detail
