// libFuzzer target: what `relsim audit` reads from a user's files, the
// request log (request_log.hpp, parse_request_log) and, from the same bytes,
// the outcomes CSV, then the audit itself over a small fixed plan. InputError
// is the answer to bad input; anything else escaping, a crash, a sanitizer
// report or an allocation sized by a number in the input is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "relsim/core/error.hpp"
#include "relsim/audit/audit.hpp"
#include "relsim/formats/plan.hpp"
#include "relsim/formats/request_log.hpp"

namespace {

const relsim::Plan& fixed_plan() {
  static const relsim::Plan plan = relsim::parse_plan(
      "{\"relsim_plan\": 1, \"tasks\": 3, \"source\": \"scripted\", \"n\": 2, \"max_requests\": 9}\n"
      "{\"task\": 0, \"requests\": [\"ok\", \"ok\"]}\n"
      "{\"task\": 1, \"requests\": [\"slow_headers\", \"slow_headers\", \"ok\", \"cut\", \"ok\"]}\n"
      "{\"task\": 2, \"requests\": [\"stall\", \"overloaded\", \"http_529\", \"ok\", \"ok\"]}\n",
      "fuzz.plan");
  return plan;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)relsim::parse_outcome_csv(text, "fuzz.csv");
  } catch (const relsim::InputError&) {
  }
  try {
    const relsim::RequestLog log = relsim::parse_request_log(text, "fuzz.log");
    const relsim::Plan& plan = fixed_plan();
    const relsim::Observations obs = relsim::observe(plan, log, nullptr, 2);
    relsim::AuditOptions options;
    options.policy.kind = relsim::PolicyKind::naive;
    options.policy.n = 2;
    options.policy.r = 2;
    options.policy.s = 2;
    (void)relsim::run_audit(plan, obs, options);
    (void)relsim::infer_policy(plan, obs, 2);
  } catch (const relsim::InputError&) {
  }
  return 0;
}
