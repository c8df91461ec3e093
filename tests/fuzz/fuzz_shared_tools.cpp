// libFuzzer target: the MCP tools server's shared tools
// (relsim/tools/shared_tools.hpp) and their arguments. One input is one
// call: byte 0 picks the tool (of the ten), byte 1 the caller (of three
// tenants' agents) and whether the partial_write fault applies, byte 2 how
// far the clock moves (0 to 255 ms), and the rest is the call's arguments
// as JSON. The state lives across inputs, as on a server, and is started
// afresh every 4096 calls.
//
// Whatever the bytes: run() returns (nothing escapes), a refusal is the
// terse "Invalid arguments" with its reason for the log, a call that ran is
// one JSON object in its text, every outcome is one of the documented
// words, and a refused call names no key. A crash, a sanitizer report or a
// broken promise is a bug.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "relsim/tools/shared_tools.hpp"

namespace {

using relsim::tools::Caller;
using relsim::tools::SharedTools;
using relsim::tools::ToolStage;

constexpr std::array<std::string_view, 10> kTools{"scratch_get", "scratch_put", "scratch_cas", "scratch_list",
                                                  "cache_put",   "cache_get",   "lock_acquire", "lock_release",
                                                  "job_submit",  "job_next"};
const std::array<Caller, 3> kCallers{Caller{"acme", "a1"}, Caller{"acme", "a2"}, Caller{"globex", "g1"}};

const std::set<std::string> kOutcomes{"found",    "absent",   "stored",  "conflict", "full",         "listed",
                                      "hit",      "miss",     "acquired", "took_expired", "busy",     "released",
                                      "expired",  "not_held", "submitted", "delivered",   "empty",    "half_written",
                                      "refused",  "failed"};

struct State {
  std::unique_ptr<SharedTools> tools;
  std::int64_t now_ms = 0;
  std::uint64_t calls = 0;
};

State& state() {
  static State s;
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  State& s = state();
  if (!s.tools || s.calls++ % 4096 == 0)
    s.tools = std::make_unique<SharedTools>(relsim::tools::SharedConfig{0.8, data[1] & 4 ? relsim::tools::QueueOrder::shuffled
                                                                                        : relsim::tools::QueueOrder::fifo,
                                                                        20261205});
  const std::string_view name = kTools[data[0] % kTools.size()];
  const Caller& caller = kCallers[data[1] % kCallers.size()];
  const bool half = (data[1] & 8) != 0;
  s.now_ms += data[2];
  const auto args = relsim::Json::parse(std::string_view(reinterpret_cast<const char*>(data) + 3, size - 3), nullptr,
                                        false);
  if (args.is_discarded() || !args.is_object()) return 0;  // the service refuses these before a tool runs
  const relsim::tools::SharedRun r = s.tools->run(name, args, caller, s.now_ms, half);
  if (!kOutcomes.contains(r.outcome)) std::abort();
  if (!r.facts.is_object()) std::abort();
  switch (r.run.stage) {
    case ToolStage::validate:
      if (r.run.text != "Invalid arguments" || r.run.detail.empty() || !r.key.empty() || r.outcome != "refused")
        std::abort();
      break;
    case ToolStage::done: {
      const auto text = nlohmann::json::parse(r.run.text, nullptr, false);
      if (text.is_discarded() || !text.is_object() || !r.run.detail.empty()) std::abort();
      break;
    }
    case ToolStage::exec:
      if (r.run.detail.empty()) std::abort();
      break;
  }
  return 0;
}
