// relsim tools audit's report (tools_audit_report.hpp).
#include "relsim/tools/tools_audit_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "relsim/montecarlo/stats.hpp"

namespace relsim::tools {
namespace {

std::string caught_words(const tools::HarnessAudit& h) {
  std::vector<std::string> parts;
  for (const auto& [stage, n] : h.caught) parts.push_back(fmt::format("{} {}", stage, n));
  return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, ", "));
}

// Each class's count, share and 95% Wilson interval over the harness's tasks.
Json task_classes_json(const tools::HarnessAudit& h) {
  Json out = Json::object();
  for (const auto& [name, n] : h.task_classes) {
    const Interval ci = binomial_interval(IntervalKind::wilson, n, h.tasks, 0.95);
    out[name] = {{"tasks", n}, {"rate", static_cast<double>(n) / static_cast<double>(h.tasks)},
                 {"wilson_95", {ci.low, ci.high}}};
  }
  return out;
}

}  // namespace

Json tools_audit_json(const tools::ToolAudit& audit) {
  Json harnesses = Json::array();
  for (const tools::HarnessAudit& h : audit.harnesses) {
    Json calls = Json::array();
    for (const tools::AuditedCall& c : h.calls)
      calls.push_back({{"group", c.group},
                       {"stage", c.stage},
                       {"tool", c.tool},
                       {"caught_at", c.caught_at ? Json(*c.caught_at) : Json(nullptr)},
                       {"reported_by", c.reported_by},
                       {"error", c.error ? Json(*c.error) : Json(nullptr)},
                       {"facts", c.facts},
                       {"facts_possible", c.facts_possible},
                       {"side_effect_left", c.side_effect_left},
                       {"side_effect_from", c.side_effect_from},
                       {"sent", c.sent},
                       {"got_to", c.got_to},
                       {"rollback", c.rollback},
                       {"result_accepted", c.result_accepted}});
    harnesses.push_back({{"harness", h.harness},
                         {"calls", calls.size()},
                         {"escaped", h.escaped},
                         {"reported", h.reported},
                         {"unlocated", h.unlocated},
                         {"side_effects_left", h.side_effects_left},
                         {"rolled_back", h.rolled_back},
                         {"caught", h.caught},
                         {"tasks", h.tasks},
                         {"task_classes", task_classes_json(h)},
                         {"per_call", calls}});
  }
  return Json{{"server_log", audit.server_log}, {"sandbox", audit.sandbox}, {"harnesses", harnesses}};
}

std::string tools_audit_text(const tools::ToolAudit& audit) {
  std::string out;
  for (const tools::HarnessAudit& h : audit.harnesses) {
    out += fmt::format("harness {}: {} calls\n", h.harness, h.calls.size());
    if (h.tasks == 0) {  // the calls one by one (the lab's groups)
      out += fmt::format("  {:<17} {:<11} {:<12} {:<6} {:<12} {:<10} {}\n", "group", "caught at", "reported by",
                         "facts", "side effect", "got to", "rollback");
      for (const tools::AuditedCall& c : h.calls)
        out += fmt::format("  {:<17} {:<11} {:<12} {:<6} {:<12} {:<10} {}\n", c.group, c.caught_at.value_or("none"),
                           c.reported_by, fmt::format("{}/{}", c.facts.size(), c.facts_possible),
                           c.side_effect_left ? "left" : "none", c.got_to, c.rollback);
    }
    out += fmt::format("  faulted calls: escaped {}; errors reported {}, with nothing to locate them {}; caught: {}; "
                       "side effects left {}; rolled back {}\n",
                       h.escaped, h.reported, h.unlocated, caught_words(h), h.side_effects_left, h.rolled_back);
    if (h.tasks > 0) {
      out += fmt::format("  {} tasks:\n", h.tasks);
      const Json classes = task_classes_json(h);
      for (const auto& [name, j] : classes.items())
        out += fmt::format("    {:<24} {:>6}  {:.4f}  95% Wilson [{:.4f}, {:.4f}]\n", name, j["tasks"].get<std::int64_t>(),
                           j["rate"].get<double>(), j["wilson_95"][0].get<double>(), j["wilson_95"][1].get<double>());
    }
  }
  return out;
}

}  // namespace relsim::tools
