// The outage schedule of the mock server's outage mode (outage.hpp).
#include "relsim/core/outage.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/parse.hpp"
#include "relsim/core/time_model.hpp"

namespace relsim {
namespace {

constexpr double kMinTimeScale = 1e-6, kMaxTimeScale = 1e3;

void check_sojourn(double value, const char* what, double time_scale) {
  if (!(value > 0.0 && value <= kMaxSeconds))
    throw InputError(fmt::format("{} = {} is out of range: it must be in (0, {:g}] model seconds", what, value,
                                 kMaxSeconds));
  if (value * time_scale < kMinOutageSojournWall)
    throw InputError(fmt::format("{} = {} model seconds lasts {:g} wall seconds at time scale {}: a mean sojourn "
                                 "must last at least {:g} wall seconds (raise it or the time scale)",
                                 what, value, value * time_scale, time_scale, kMinOutageSojournWall));
}

}  // namespace

void validate(const OutageConfig& c) {
  if (!(c.time_scale >= kMinTimeScale && c.time_scale <= kMaxTimeScale))
    throw InputError(fmt::format("time-scale = {} is out of range: it must be in [{:g}, {:g}] wall seconds per model "
                                 "second",
                                 c.time_scale, kMinTimeScale, kMaxTimeScale));
  check_sojourn(c.t_good, "t_good", c.time_scale);
  check_sojourn(c.t_bad, "t_bad", c.time_scale);
  c.kinds.checked_total();
}

std::array<double, 2> parse_outage_sojourns(std::string_view spec) {
  const auto comma = spec.find(',');
  if (comma == std::string_view::npos || spec.find(',', comma + 1) != std::string_view::npos)
    throw InputError(fmt::format("outage = '{}' is not T_GOOD,T_BAD: give the mean good and bad sojourns in model "
                                 "seconds, e.g. 120,30",
                                 spec.substr(0, 100)));
  std::array<double, 2> out{};
  const std::array<std::string_view, 2> parts = {spec.substr(0, comma), spec.substr(comma + 1)};
  const std::array<const char*, 2> names = {"t_good", "t_bad"};
  for (std::size_t i = 0; i < 2; ++i) {
    const auto v = parse_number<double>(parts[i]);
    if (!v)
      throw InputError(fmt::format("outage {} = '{}' is not a number: give seconds in (0, {:g}]", names[i],
                                   parts[i].substr(0, 100), kMaxSeconds));
    if (!(*v > 0.0 && *v <= kMaxSeconds))
      throw InputError(fmt::format("outage {} = {} is out of range: it must be in (0, {:g}] model seconds", names[i],
                                   *v, kMaxSeconds));
    out[i] = *v;
  }
  return out;
}

OutageSchedule::OutageSchedule(const OutageConfig& config) : config_(config) {
  validate(config_);
  const double p = config_.t_bad / (config_.t_good + config_.t_bad);
  first_bad_ = rng::uniform(config_.seed, rng::Stream::outage, 0, 0) < p;
  cut_ = kind_cuts(config_.kinds);
}

double OutageSchedule::sojourn(std::uint64_t j) const {
  const double u = rng::uniform(config_.seed, rng::Stream::outage, 0, j + 1);
  return -(bad_sojourn(j) ? config_.t_bad : config_.t_good) * std::log1p(-u);
}

void OutageSchedule::extend_past(double t) {
  double end = switches_.empty() ? 0.0 : switches_.back();
  while (end <= t) {
    end += sojourn(forgotten_ + switches_.size());
    switches_.push_back(end);
  }
  if (switches_.size() > kMaxOutageSwitches) {
    // Let the oldest half go; forgotten_ keeps the sojourns' numbers.
    const std::size_t drop = switches_.size() / 2;
    switches_.erase(switches_.begin(), switches_.begin() + static_cast<std::ptrdiff_t>(drop));
    forgotten_ += drop;
  }
}

bool OutageSchedule::bad_at(double t) {
  RELSIM_ASSERT(t >= 0.0);
  extend_past(t);
  const double kept_from = forgotten_ == 0 ? 0.0 : switches_.front();
  if (t < kept_from) {
    // Let go: draw again from the start (pure, so the same answer).
    double end = 0.0;
    for (std::uint64_t j = 0;; ++j) {
      end += sojourn(j);
      if (t < end) return bad_sojourn(j);
    }
  }
  // The first kept switch after t ends the sojourn t falls in.
  const auto it = std::upper_bound(switches_.begin(), switches_.end(), t);
  const std::uint64_t j = forgotten_ + static_cast<std::uint64_t>(it - switches_.begin());
  return bad_sojourn(j);
}

OutageView OutageSchedule::view(double until) {
  extend_past(until);
  OutageView v;
  v.now = until;
  // Sojourn forgotten_ + i runs from switches_[i - 1] (or `from`) to switches_[i].
  v.from = forgotten_ == 0 ? 0.0 : switches_.front();
  const std::size_t first = forgotten_ == 0 ? 0 : 1;
  for (std::size_t i = first; i < switches_.size(); ++i) {
    const double start = i == 0 ? 0.0 : switches_[i - 1];
    if (start >= until) break;
    if (bad_sojourn(forgotten_ + i) && switches_[i] > start) v.bad.push_back({start, switches_[i]});
  }
  return v;
}

FaultKind OutageSchedule::kind_of(std::int64_t task, std::int64_t index) const {
  const std::uint32_t word = rng::kind_word(config_.seed, static_cast<std::uint64_t>(task),
                                            static_cast<std::uint64_t>(index));
  return kind_of_word(cut_, word);
}

Json to_json(const OutageConfig& c, const OutageView& v) {
  Json bad = Json::array();
  for (const OutageInterval& i : v.bad) bad.push_back(Json::array({i.start, i.end}));
  return Json{{"t_good", c.t_good},
              {"t_bad", c.t_bad},
              {"time_scale", c.time_scale},
              {"seed", c.seed},
              {"kinds", to_string(c.kinds)},
              {"p", c.t_bad / (c.t_good + c.t_bad)},
              {"now", v.now},
              {"from", v.from},
              {"bad", std::move(bad)}};
}

}  // namespace relsim
