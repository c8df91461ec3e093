// Predictions at the estimate and over the joint 95% region
// (include/relsim/fit/predict.hpp).
#include "relsim/fit/predict.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/faults.hpp"
#include "relsim/core/parse.hpp"
#include "relsim/exact/exact.hpp"

namespace relsim::fit {
namespace {

constexpr std::string_view kKeys = "policy, s, r, n, B";

std::string short_number(double x) { return fmt::format("{:.6g}", x); }

struct Point {
  double p, q;
};

std::vector<Point> region_points(const PredictRegion& region, const ChainFit& fit, int grid) {
  const Model at = fitted_model(fit);
  std::vector<Point> points = {{at.p, at.q}};
  const double drop = region_drop();
  const Interval pb = region.p, qb = region.q;
  for (int i = 0; i < grid; ++i)
    for (int j = 0; j < grid; ++j) {
      const double p = pb.low + (pb.high - pb.low) * i / (grid - 1);
      const double q = qb.low + (qb.high - qb.low) * j / (grid - 1);
      if ((p == 1.0 && q != 1.0) || q < min_q_for(p)) continue;
      if (fit.mle.log_likelihood - region.log_likelihood(p, q) <= drop) points.push_back({p, q});
    }
  return points;
}

}  // namespace

PredictSpec parse_predict(std::string_view spec) {
  PredictSpec out;
  out.text = std::string(spec);
  std::optional<std::string> policy;
  std::optional<long long> s, r, n, B;
  std::size_t start = 0;
  while (start <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', start), spec.size());
    const std::string_view part = spec.substr(start, comma - start);
    const std::size_t eq = part.find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw InputError(fmt::format("--predict '{}': '{}' is not KEY=VALUE (keys: {})", spec, part, kKeys));
    const std::string_view key = part.substr(0, eq), value = part.substr(eq + 1);
    const auto number = [&](std::optional<long long>& slot) {
      if (slot) throw InputError(fmt::format("--predict '{}': {} is given twice", spec, key));
      slot = parse_integer(value, fmt::format("--predict {}", key));
    };
    if (key == "policy") {
      if (policy) throw InputError(fmt::format("--predict '{}': policy is given twice", spec));
      policy = std::string(value);
    } else if (key == "s") number(s);
    else if (key == "r") number(r);
    else if (key == "n") number(n);
    else if (key == "B") number(B);
    else throw InputError(fmt::format("--predict '{}': '{}' is not a key (keys: {})", spec, key, kKeys));
    start = comma + 1;
  }
  if (!policy || !r || !n)
    throw InputError(fmt::format("--predict '{}': give policy, r and n, e.g. policy=layered,s=2,r=3,n=10", spec));
  out.policy.kind = parse_policy_kind(*policy);
  if (B && out.policy.kind != PolicyKind::budgeted)
    throw InputError(fmt::format("--predict '{}': B is for policy=budgeted only", spec));
  if (s && out.policy.kind == PolicyKind::simple)
    throw InputError(fmt::format("--predict '{}': s is not used by policy=simple", spec));
  const auto in_int = [&](long long v, std::string_view key) {
    if (v < 0 || v > 1'000'000'000'000LL)
      throw InputError(fmt::format("--predict '{}': {} = {} is out of range", spec, key, v));
    return v;
  };
  out.policy.n = in_int(*n, "n");
  out.policy.r = static_cast<int>(std::min<long long>(in_int(*r, "r"), kMaxRetries + 1LL));
  out.policy.s = static_cast<int>(std::min<long long>(in_int(s.value_or(2), "s"), kMaxHttpRetries + 1LL));
  out.policy.B = static_cast<int>(std::min<long long>(in_int(B.value_or(0), "B"), kMaxRequestsPerCall + 1LL));
  validate(out.policy);
  return out;
}

Model fitted_model(const ChainFit& fit) {
  Model m;
  m.p = fit.p;
  m.q = fit.q_identified ? fit.q : (fit.p == 1.0 ? 1.0 : fit.p);
  m.q = std::clamp(m.q, min_q_for(m.p), 1.0);
  return m;
}

namespace {

PredictRegion region_of(const ChainCounts& counts, const ChainFit& fit) {
  const double drop = region_drop();
  PredictRegion region;
  region.p = profile_interval(counts, Parameter::p, fit.mle, drop);
  region.q = fit.q_identified ? profile_interval(counts, Parameter::q, fit.mle, drop) : Interval{0.0, 1.0};
  region.log_likelihood = [&counts](double p, double q) { return log_likelihood(counts, p, q); };
  return region;
}

}  // namespace

Prediction predict(const ChainCounts& counts, const ChainFit& fit, const PredictSpec& spec, int grid) {
  return predict(region_of(counts, fit), fit, spec, grid);
}

std::vector<std::pair<double, double>> chain_region(const ChainCounts& counts, const ChainFit& fit, int grid) {
  std::vector<std::pair<double, double>> out;
  for (const Point& pt : region_points(region_of(counts, fit), fit, grid)) out.emplace_back(pt.p, pt.q);
  return out;
}

Prediction predict(const PredictRegion& region, const ChainFit& fit, const PredictSpec& spec, int grid) {
  Prediction out;
  out.spec = spec;
  out.kinds = fit.kinds.kinds_option;
  ExactOptions options;
  options.distribution = false;
  if (!out.kinds.empty()) options.kinds = parse_fault_weights(out.kinds);
  const Model at = fitted_model(fit);
  const ExactResult point = exact_matrix(at, spec.policy, options);
  out.success = point.success;
  out.mean_requests = point.mean_requests;
  for (int i = 0; i < kOutcomeClasses; ++i)
    if (point.outcomes[static_cast<std::size_t>(i)] > 0.0)
      out.outcomes.emplace_back(outcome_class(i).name(), point.outcomes[static_cast<std::size_t>(i)]);
  out.success_band = {point.success, point.success};
  out.requests_band = {point.mean_requests, point.mean_requests};
  const std::vector<Point> points = region_points(region, fit, grid);
  out.region_points = static_cast<int>(points.size());
  for (const Point& pt : points) {
    Model m;
    m.p = pt.p;
    m.q = pt.q;
    const ExactResult r = exact_matrix(m, spec.policy, options);
    out.success_band = {std::min(out.success_band.low, r.success), std::max(out.success_band.high, r.success)};
    out.requests_band = {std::min(out.requests_band.low, r.mean_requests),
                         std::max(out.requests_band.high, r.mean_requests)};
  }
  const Policy& pol = spec.policy;
  out.exact_command = fmt::format("relsim exact --p {} --q {} --r {} --n {} --policy {}", short_number(at.p),
                                  short_number(at.q), pol.r, pol.n, to_string(pol.kind));
  if (pol.kind != PolicyKind::simple) out.exact_command += fmt::format(" --s {}", pol.s);
  if (pol.kind == PolicyKind::budgeted) out.exact_command += fmt::format(" --B {}", pol.B);
  if (!out.kinds.empty()) out.exact_command += " --kinds " + out.kinds;
  out.netem_command = fmt::format("tc qdisc add dev IF root netem loss gemodel {}% {}% 100% 0%",
                                  short_number(100.0 * at.p0()), short_number(100.0 * (1.0 - at.q)));
  return out;
}

}  // namespace relsim::fit
