// The backoff family and the retry-after use a log's waits say (wait_fit.hpp).
#include "relsim/audit/wait_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

namespace relsim {
namespace {

// Round bases (model seconds) and the jitter forms the families use.
constexpr double kBases[] = {0.05, 0.1, 0.125, 0.2, 0.25, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 4, 5, 8, 10};
constexpr double kJitters[] = {0.0, 0.25, 0.5, 1.0};

bool retries_a_429(const ObservedRetry& r) {
  return r.after == FaultKind::http_429 && r.to.http == r.from.http + 1;
}

// The density of an observed wait: uniform over the range owed [a, b]
// (a = b without jitter) plus the client's own delay, exponential with mean
// tau (timers, the next request's set-up), allowed to be kEarly early.
constexpr double kEarly = 0.005;
double wait_density(double waited, const WaitWindow& owed, double tau) {
  const double a = owed.shortest, b = owed.longest;
  const double w = waited + kEarly;
  if (w < a) return 0.0;
  if (b - a < 1e-9) return std::exp(-(w - a) / tau) / tau;
  if (w <= b) return -std::expm1(-(w - a) / tau) / (b - a);
  return (std::exp(-(w - b) / tau) - std::exp(-(w - a) / tau)) / (b - a);
}

// The client's typical delay past its schedule, seconds: profiled out.
constexpr double kDelays[] = {0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5};
constexpr double kOutlierShare = 0.01;

void score(const std::vector<ObservedRetry>& retries, const AuditOptions& options, std::optional<double> wait,
           BackoffFit& fit) {
  ClientTiming timing = options.timing;
  timing.backoff_schedule = fit.backoff;
  fit.explained = 0;
  std::vector<WaitWindow> windows;
  windows.reserve(retries.size());
  for (const ObservedRetry& r : retries) {
    windows.push_back(wait_window(timing, wait, options.wait_tolerance, r));
    fit.explained += windows.back().holds(r.waited);
  }
  fit.log_likelihood = -std::numeric_limits<double>::infinity();
  for (const double tau : kDelays) {
    double ll = 0.0;
    for (std::size_t i = 0; i < retries.size(); ++i)
      ll += std::log((1.0 - kOutlierShare) * wait_density(retries[i].waited, windows[i], tau) +
                     kOutlierShare / kOutlierSeconds);
    if (ll > fit.log_likelihood) fit.log_likelihood = ll, fit.delay = tau;
  }
}

int largest_retry(const std::vector<ObservedRetry>& retries, const ClientTiming& timing) {
  int k = 0;
  for (const ObservedRetry& r : retries) k = std::max(k, wait_window(timing, std::nullopt, 0.0, r).retry);
  return k;
}

// One wait per retry number: the median of the waits observed at it (model
// seconds, to 10 ms); a number never observed repeats the one before.
Backoff median_list(const std::vector<ObservedRetry>& retries, const ClientTiming& timing, int largest) {
  std::vector<std::vector<double>> at(static_cast<std::size_t>(largest) + 1);
  for (const ObservedRetry& r : retries)
    at[static_cast<std::size_t>(wait_window(timing, std::nullopt, 0.0, r).retry)].push_back(r.waited /
                                                                                             timing.time_scale);
  Backoff b;
  b.kind = Backoff::Kind::list;
  for (auto& waits : at) {
    if (waits.empty()) {
      b.list.push_back(b.list.empty() ? 0.0 : b.list.back());
      continue;
    }
    const auto mid = waits.begin() + static_cast<std::ptrdiff_t>(waits.size() / 2);
    std::nth_element(waits.begin(), mid, waits.end());
    b.list.push_back(std::max(0.0, std::round(*mid * 100.0) / 100.0));
  }
  return b;
}

// Every schedule tried, in the order ties are broken by.
std::vector<BackoffFit> candidates(const std::vector<ObservedRetry>& retries, const ClientTiming& timing) {
  std::vector<BackoffFit> out;
  Backoff none;
  none.kind = Backoff::Kind::none;
  out.push_back({none, 0});
  out.push_back({Backoff::sdk(), 0});
  const int largest = largest_retry(retries, timing);
  for (const double base : kBases)
    for (const double jitter : kJitters)
      for (int m = -1; m < largest; ++m) {  // m = -1: no cap; else the cap binds from retry m + 1 on
        Backoff b;
        b.base = base, b.jitter = jitter, b.cap = m < 0 ? kMaxSeconds : std::ldexp(base, m);
        if (to_string(b) == "sdk") continue;
        out.push_back({b, 1 + (jitter > 0.0) + (m >= 0)});
      }
  if (!retries.empty()) {
    Backoff list = median_list(retries, timing, largest);
    const int entries = static_cast<int>(list.list.size());
    out.push_back({std::move(list), entries});
  }
  return out;
}

// The greatest likelihood less half a log(retries) per free parameter (the
// Bayesian information criterion: a list's entries are fitted to the waits);
// then the fewest parameters; then the order tried.
BackoffFit best_fit(const std::vector<ObservedRetry>& retries, const AuditOptions& options,
                    std::optional<double> wait) {
  std::vector<BackoffFit> all = candidates(retries, options.timing);
  const double per_parameter = 0.5 * std::log(static_cast<double>(std::max<std::size_t>(retries.size(), 1)));
  const auto criterion = [&](const BackoffFit& f) { return f.log_likelihood - per_parameter * f.parameters; };
  std::size_t best = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    score(retries, options, wait, all[i]);
    const double a = criterion(all[i]), b = criterion(all[best]);
    if (a > b + 1e-9 || (std::abs(a - b) <= 1e-9 && all[i].parameters < all[best].parameters)) best = i;
  }
  return all[best];
}

// Which wait the retries of a 429 kept: the backoff's, retry-after's or
// retry-after-ms' (each honoured only in [0, kMaxRetryAfter) s). Each retry
// goes to the hypothesis under which its wait is likeliest (the fit's delay
// model, `delay` its mean); it tells them apart when that is 10 times likelier
// than every other.
RetryAfterReading read_retry_after(const std::vector<ObservedRetry>& retries, const AuditOptions& options,
                                   const RetryAfterSent& sent, double delay) {
  RetryAfterReading out;
  const auto usable = [](std::optional<double> h) {
    return h && *h >= 0.0 && *h < kMaxRetryAfter ? h : std::nullopt;
  };
  const std::optional<double> hint[3] = {std::nullopt, usable(sent.retry_after), usable(sent.retry_after_ms)};
  std::int64_t held[3] = {0, 0, 0};
  std::int64_t alone[3] = {0, 0, 0};
  for (const ObservedRetry& r : retries) {
    if (!retries_a_429(r)) continue;
    ++out.retries;
    double d[3] = {-1.0, -1.0, -1.0};
    for (int h = 0; h < 3; ++h) {
      if (h > 0 && !hint[h]) continue;
      d[h] = wait_density(r.waited, wait_window(options.timing, hint[h], 0.0, r), delay);
    }
    int best = 0;  // ties: the backoff, then retry-after-ms (read first by the SDKs), then retry-after
    for (const int h : {2, 1})
      if (d[h] > d[best]) best = h;
    ++held[best];
    bool clear = d[best] > 0.0;
    for (int h = 0; h < 3; ++h)
      if (h != best && d[h] >= 0.0 && d[best] < 10.0 * d[h]) clear = false;
    alone[best] += clear;
  }
  out.backoff = held[0], out.retry_after = held[1], out.retry_after_ms = held[2];
  int use = 0;
  for (const int h : {2, 1})
    if (held[h] > held[use]) use = h;
  out.use = use == 0 ? RetryAfterUse::backoff : use == 1 ? RetryAfterUse::retry_after : RetryAfterUse::retry_after_ms;
  out.told_apart = alone[use] > 0;
  out.wait = hint[use];
  return out;
}

std::string seconds(double s) { return s >= kMaxSeconds ? "no cap" : fmt::format("{:g} s", s); }

}  // namespace

std::string_view to_string(RetryAfterUse use) {
  switch (use) {
    case RetryAfterUse::backoff: return "backoff";
    case RetryAfterUse::retry_after: return "retry-after";
    case RetryAfterUse::retry_after_ms: return "retry-after-ms";
  }
  return "?";
}

WaitFit fit_waits(const Plan& plan, const Observations& obs, const AuditOptions& options, bool fit_backoff) {
  std::vector<ObservedRetry> retries;
  for (const TaskObservation& o : obs.tasks) {
    const TaskPlan& tp = plan.tasks[static_cast<std::size_t>(o.task)];
    if (!consistent_with(options.policy, tp, o, options.accept)) continue;
    const std::vector<ObservedRetry> mine = observed_retries(options.policy, options.accept, tp, o);
    retries.insert(retries.end(), mine.begin(), mine.end());
  }
  return fit_retries(retries, obs.retry_after, options, fit_backoff);
}

WaitFit fit_retries(const std::vector<ObservedRetry>& retries, const RetryAfterSent& sent, const AuditOptions& options,
                    bool fit_backoff) {
  WaitFit fit;
  fit.fitted = fit_backoff;
  fit.retries = static_cast<std::int64_t>(retries.size());
  // The schedule from the retries the server gave no hint for (all, when
  // there are no others), then which wait the 429s' retries kept.
  std::vector<ObservedRetry> plain;
  for (const ObservedRetry& r : retries)
    if (!retries_a_429(r)) plain.push_back(r);
  const std::vector<ObservedRetry>& basis = plain.empty() ? retries : plain;
  const auto given = [&] {
    BackoffFit f{options.timing.backoff_schedule, 0};
    score(basis, options, std::nullopt, f);
    return f;
  };
  fit.best = fit_backoff ? best_fit(basis, options, std::nullopt) : given();
  AuditOptions timed = options;
  timed.timing.backoff_schedule = fit.best.backoff;
  fit.retry_after = read_retry_after(retries, timed, sent, fit.best.delay);
  // Retries of a 429 that waited the backoff are evidence for it too.
  if (fit_backoff && fit.retry_after.use == RetryAfterUse::backoff && plain.size() != retries.size())
    fit.best = best_fit(retries, options, std::nullopt);
  score(retries, options, fit.retry_after.wait, fit.best);
  fit.outside = fit.retries - fit.best.explained;
  return fit;
}

AuditOptions with_waits(AuditOptions options, const WaitFit& fit) {
  options.timing.backoff_schedule = fit.best.backoff;
  options.retry_after_wait = fit.retry_after.wait;
  return options;
}

std::string describe_backoff(const Backoff& b) {
  switch (b.kind) {
    case Backoff::Kind::none: return "no wait";
    case Backoff::Kind::list: {
      std::string out;
      for (const double w : b.list) out += fmt::format("{}{:g} s", out.empty() ? "" : ", ", w);
      return fmt::format("list: {} (the last repeats), no jitter", out);
    }
    case Backoff::Kind::exp: break;
  }
  if (to_string(b) == "sdk") return "the SDKs' min(0.5 s 2^k, 8 s) (1 - U/4)";
  const std::string cap = b.cap >= kMaxSeconds ? "no cap" : fmt::format("capped at {}", seconds(b.cap));
  if (b.jitter == 0.0) return fmt::format("{:g} s 2^k, no jitter, {}", b.base, cap);
  if (b.jitter == 0.5)
    return fmt::format("(1 + U) {:g} s 2^k, {}", b.base / 2, b.cap >= kMaxSeconds ? cap : fmt::format("capped at (1 + U) {:g} s", b.cap / 2));
  if (b.jitter == 1.0) return fmt::format("full jitter: U {:g} s 2^k, {}", b.base, cap);
  return fmt::format("{:g} s 2^k (1 - {:g} U), {}", b.base, b.jitter, cap);
}

}  // namespace relsim
