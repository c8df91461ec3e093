// libFuzzer target: the plan reader (plan.hpp, parse_plan) on arbitrary
// text. InputError is its answer to bad input; anything else escaping, a
// crash or a sanitizer report is a bug. A plan it accepts must survive a
// write/read round trip unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "relsim/core/error.hpp"
#include "relsim/formats/plan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  relsim::Plan plan;
  try {
    plan = relsim::parse_plan(text, "fuzz.plan");
  } catch (const relsim::InputError&) {
    return 0;
  }
  const relsim::Plan again = relsim::parse_plan(relsim::write_plan(plan), "fuzz.plan (rewritten)");
  if (again.tasks.size() != plan.tasks.size()) std::abort();
  for (std::size_t t = 0; t < plan.tasks.size(); ++t)
    if (again.tasks[t].task != plan.tasks[t].task || again.tasks[t].requests != plan.tasks[t].requests) std::abort();
  return 0;
}
