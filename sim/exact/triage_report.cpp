// relsim exact --triage's output (triage_report.hpp).
#include "relsim/exact/triage_report.hpp"

#include <fmt/format.h>

namespace relsim {
namespace {

Json rates_json(const VerdictRates& v) {
  return {{"pass", v.pass}, {"bug", v.bug}, {"env_error", v.env_error}, {"mean_loads", v.mean_loads}};
}

}  // namespace

std::string triage_chain_words(const Model& m) {
  std::string s = fmt::format("p = {:g}, q = {:g}", m.p, m.q);
  if (m.q < 1.0) s += fmt::format(" (a burst lasts {:.3g} loads on average)", 1.0 / (1.0 - m.q));
  s += fmt::format(", {} silent {} between two loads of a run", m.b, m.b == 1 ? "step" : "steps");
  if (m.chain == ChainScope::continuous)
    s += fmt::format(", continuous chain ({} silent {} between runs)", m.g, m.g == 1 ? "step" : "steps");
  else
    s += ", fresh chain per run";
  return s;
}

Json triage_json(const Model& m, Tester tester, int reloads, const TriageRates& r) {
  return {{"triage", std::string(to_string(tester))},
          {"reloads", tester == Tester::careful ? Json(reloads) : Json(nullptr)},
          {"p", m.p},
          {"q", m.q},
          {"b", m.b},
          {"g", m.g},
          {"chain", m.chain == ChainScope::fresh ? "fresh" : "continuous"},
          {"false_bug", r.false_bug()},
          {"env_error", r.healthy.env_error},
          {"missed_bug", r.missed_bug()},
          {"healthy", rates_json(r.healthy)},
          {"buggy", rates_json(r.buggy)}};
}

std::string triage_table(const Model& m, Tester tester, int reloads, const TriageRates& r) {
  const std::string who = tester == Tester::naive
                              ? std::string("naive (one load; a failed load is reported as a bug)")
                              : fmt::format("careful (a failed load is reloaded up to {} {}; still failing: ENV_ERROR)",
                                            reloads, reloads == 1 ? "time" : "times");
  std::string s = fmt::format("relsim exact --triage {}\n  tester: {}\n  chain: {}\n", to_string(tester), who,
                              triage_chain_words(m));
  s += fmt::format("  healthy app: PASS {:.6g}, false BUG {:.6g}, ENV_ERROR {:.6g}; {:.4g} loads per run\n",
                   r.healthy.pass, r.healthy.bug, r.healthy.env_error, r.healthy.mean_loads);
  s += fmt::format("  buggy app:   BUG {:.6g}, missed (PASS) {:.6g}, ENV_ERROR {:.6g}; {:.4g} loads per run\n",
                   r.buggy.bug, r.buggy.pass, r.buggy.env_error, r.buggy.mean_loads);
  return s;
}

}  // namespace relsim
