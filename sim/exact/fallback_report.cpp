// The fallback in the reports (fallback_report.hpp).
#include "relsim/exact/fallback_report.hpp"

#include <utility>

#include <fmt/format.h>

namespace relsim {
namespace {

// A two-state chain in seconds by its mean sojourns (two_state_time_chain).
std::pair<double, double> sojourns(const TimeChain& c) { return {1.0 / c.generator(0, 1), 1.0 / c.generator(1, 0)}; }

}  // namespace

Json fallback_json(double p, const Fallback& fb) {
  Json j{{"after", fb.after}, {"kinds2", to_string(fb.kinds)}};
  if (fb.timed()) {
    const auto [good2, bad2] = sojourns(*fb.second_time);
    j["t_good2"] = good2;
    j["t_bad2"] = bad2;
    j["p2"] = fb.second_p();
    if (fb.correlated()) {
      const auto [good, bad] = sojourns(*fb.shared_time);
      j["shared_t_good"] = good;
      j["shared_t_bad"] = bad;
    }
    j["shared_p"] = fb.shared_p();
  } else {
    j["p2"] = fb.second.p;
    j["q2"] = fb.second.q;
    j["shared_p"] = fb.shared.p;
    j["shared_q"] = fb.correlated() ? Json(fb.shared.q) : Json(nullptr);
  }
  j["p_marginal"] = marginal_p(p, fb);
  j["p2_marginal"] = marginal_p(fb.second_p(), fb);
  j["price_in2"] = fb.price_in ? Json(*fb.price_in) : Json(nullptr);
  j["price_out2"] = fb.price_out ? Json(*fb.price_out) : Json(nullptr);
  if (fb.cooldown)
    j["cooldown"] = Json{{"fails", fb.cooldown->fails}, {"window", fb.cooldown->window}, {"seconds", fb.cooldown->seconds}};
  return j;
}

std::string fallback_words(double p, const Fallback& fb) {
  const auto [good2, bad2] = fb.timed() ? sojourns(*fb.second_time) : std::pair{0.0, 0.0};
  std::string s = fmt::format("after {} failed request{} of a call, to ", fb.after, fb.after == 1 ? "" : "s");
  s += fb.timed() ? fmt::format("mean good {} s, mean bad {} s", good2, bad2)
                  : fmt::format("p2 = {:.6g}, q2 = {:.6g}", fb.second.p, fb.second.q);
  s += fmt::format(" ({})", to_string(fb.kinds));
  if (fb.correlated()) {
    s += fb.timed() ? fmt::format("; shared outage mean good {} s, mean bad {} s", sojourns(*fb.shared_time).first,
                                  sojourns(*fb.shared_time).second)
                    : fmt::format("; shared outage p = {:.6g}, q = {:.6g}", fb.shared.p, fb.shared.q);
    s += fmt::format(": bad shares {:.6g} and {:.6g}", marginal_p(p, fb), marginal_p(fb.second_p(), fb));
  }
  if (const std::optional<Cooldown>& c = fb.cooldown)
    s += fmt::format("; the first skipped {:g} s after {} failure{} within {:g} s", c->seconds, c->fails,
                     c->fails == 1 ? "" : "s", c->window);
  return s;
}

}  // namespace relsim
