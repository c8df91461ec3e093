#include "relsim/core/time_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <unsupported/Eigen/MatrixFunctions>

#include "relsim/core/error.hpp"
#include "relsim/core/parse.hpp"

namespace relsim {
namespace {

constexpr int kMaxListEntries = 1000;

void check_seconds(double value, std::string_view what, bool positive) {
  const bool ok = positive ? value > 0.0 : value >= 0.0;
  if (!(ok && value <= kMaxSeconds))
    throw InputError(fmt::format("{} = {} is out of range: it must be in {}0, {:g}] seconds", what, value,
                                 positive ? "(" : "[", kMaxSeconds));
}

std::vector<std::string_view> split_commas(std::string_view text) {
  std::vector<std::string_view> parts;
  for (;;) {
    const auto comma = text.find(',');
    parts.push_back(text.substr(0, comma));
    if (comma == std::string_view::npos) return parts;
    text.remove_prefix(comma + 1);
  }
}

double parse_seconds(std::string_view text, std::string_view what) {
  const auto v = parse_number<double>(text);
  if (!v) throw InputError(fmt::format("{} = '{}' is not a number of seconds: give a decimal in [0, {:g}]", what, text, kMaxSeconds));
  check_seconds(*v, what, false);
  return *v;
}

// The stationary law of a generator: the left null vector of Q, normalised.
Eigen::RowVectorXd stationary(const Eigen::MatrixXd& q) {
  const Eigen::Index k = q.rows();
  // Solve pi Q = 0 with sum pi = 1: replace one equation by the normalisation.
  Eigen::MatrixXd a = q.transpose();
  a.row(k - 1).setOnes();
  Eigen::VectorXd rhs = Eigen::VectorXd::Zero(k);
  rhs(k - 1) = 1.0;
  Eigen::VectorXd pi = a.fullPivLu().solve(rhs);
  for (Eigen::Index i = 0; i < k; ++i) pi(i) = std::max(pi(i), 0.0);
  return (pi / pi.sum()).transpose();
}

bool two_state_form(const TimeChain& c) { return c.states() == 2; }

// For two states exp(Qt) = Pi + e^{-lambda t} (I - Pi), Pi the matrix whose
// rows are the stationary law, lambda the sum of the two rates.
double two_state_rate(const TimeChain& c) { return -c.generator(0, 0) - c.generator(1, 1); }

Eigen::MatrixXd stationary_rows(const TimeChain& c) {
  return Eigen::VectorXd::Ones(c.states()) * c.initial;
}

}  // namespace

double Backoff::max_wait(int k) const {
  switch (kind) {
    case Kind::none: return 0.0;
    case Kind::exp: return std::min(base * std::ldexp(1.0, std::min(k, 1000)), cap);
    case Kind::list: return list[static_cast<std::size_t>(std::min<int>(k, static_cast<int>(list.size()) - 1))];
  }
  return 0.0;
}

Backoff parse_backoff(std::string_view spec) {
  Backoff b;
  if (spec == "sdk") return Backoff::sdk();
  if (spec == "none") {
    b.kind = Backoff::Kind::none;
    return b;
  }
  const auto colon = spec.find(':');
  const std::string_view head = spec.substr(0, colon);
  if (colon == std::string_view::npos || (head != "exp" && head != "list"))
    throw InputError(fmt::format("backoff = '{}' is not a schedule: use sdk, exp:BASE,CAP,JITTER, list:W1,W2,... or none", spec));
  const auto parts = split_commas(spec.substr(colon + 1));
  if (head == "exp") {
    if (parts.size() != 3)
      throw InputError(fmt::format("backoff = '{}' needs three numbers, exp:BASE,CAP,JITTER (the SDKs: exp:0.5,8,0.25)", spec));
    b.kind = Backoff::Kind::exp;
    b.base = parse_seconds(parts[0], "backoff base");
    b.cap = parse_seconds(parts[1], "backoff cap");
    const auto j = parse_number<double>(parts[2]);
    if (!j || !(*j >= 0.0 && *j <= 1.0))
      throw InputError(fmt::format("backoff jitter = '{}' is out of range: it must be in [0, 1] (0.25 for the SDKs, 1 for full jitter)", parts[2]));
    b.jitter = *j;
    return b;
  }
  if (parts.size() > static_cast<std::size_t>(kMaxListEntries))
    throw InputError(fmt::format("backoff list has {} entries: at most {}", parts.size(), kMaxListEntries));
  b.kind = Backoff::Kind::list;
  for (const auto part : parts) b.list.push_back(parse_seconds(part, "backoff list entry"));
  return b;
}

std::string to_string(const Backoff& b) {
  switch (b.kind) {
    case Backoff::Kind::none: return "none";
    case Backoff::Kind::exp:
      if (b.base == 0.5 && b.cap == 8.0 && b.jitter == 0.25) return "sdk";
      return fmt::format("exp:{},{},{}", b.base, b.cap, b.jitter);
    case Backoff::Kind::list: {
      std::string s = "list:";
      for (std::size_t i = 0; i < b.list.size(); ++i) s += fmt::format("{}{}", i ? "," : "", b.list[i]);
      return s;
    }
  }
  return "none";
}

Eigen::MatrixXd TimeChain::transition(double seconds) const {
  RELSIM_ASSERT(seconds >= 0.0);
  if (two_state_form(*this)) {
    const Eigen::MatrixXd pi = stationary_rows(*this);
    const Eigen::MatrixXd id = Eigen::MatrixXd::Identity(2, 2);
    return pi + std::exp(-two_state_rate(*this) * seconds) * (id - pi);
  }
  return (generator * seconds).exp();
}

Eigen::MatrixXd TimeChain::averaged_transition(double fixed, double wait, double jitter) const {
  const double width = wait * jitter;  // the wait is uniform on [wait - width, wait]
  const double low = fixed + wait - width;
  if (!(width > 0.0)) return transition(fixed + wait);
  const Eigen::Index k = states();
  if (two_state_form(*this)) {
    // (1/w) int_0^w e^{-lambda (low + s)} ds = e^{-lambda low} (1 - e^{-lambda w}) / (lambda w).
    const double lambda = two_state_rate(*this);
    const double x = lambda * width;
    const double mean_decay = std::exp(-lambda * low) * (x > 1e-8 ? -std::expm1(-x) / x : 1.0 - x / 2.0);
    const Eigen::MatrixXd pi = stationary_rows(*this);
    return pi + mean_decay * (Eigen::MatrixXd::Identity(k, k) - pi);
  }
  // Van Loan (1978): exp([[Q, I], [0, 0]] w) holds int_0^w exp(Qs) ds top right.
  Eigen::MatrixXd block = Eigen::MatrixXd::Zero(2 * k, 2 * k);
  block.topLeftCorner(k, k) = generator * width;
  block.topRightCorner(k, k) = Eigen::MatrixXd::Identity(k, k) * width;
  const Eigen::MatrixXd e = block.exp();
  const Eigen::MatrixXd integral = e.topRightCorner(k, k) / width;
  Eigen::MatrixXd out = transition(low) * integral;
  for (Eigen::Index i = 0; i < k; ++i) out.row(i) /= out.row(i).sum();
  return out;
}

Eigen::MatrixXd TimeChain::wait_weighted_transition(double fixed, double wait, double jitter) const {
  const double width = wait * jitter;  // W is uniform on [low, wait]
  const double low = wait - width;
  if (!(width > 0.0)) return wait * transition(fixed + wait);
  const Eigen::Index k = states();
  if (two_state_form(*this)) {
    // E W e^{-lambda (fixed + W)} = e^{-lambda fixed} (1/width) int_low^wait w e^{-lambda w} dw.
    const double lambda = two_state_rate(*this);
    double integral = 0.0;
    if (lambda * width < 1.0) {
      // Gauss-Legendre, 8 points: the integrand is all but a polynomial here,
      // where the closed form below would cancel.
      static constexpr double x[4] = {0.1834346424956498, 0.5255324099163290, 0.7966664774136267, 0.9602898564975363};
      static constexpr double a[4] = {0.3626837833783620, 0.3137066458778873, 0.2223810344533745, 0.1012285362903763};
      const double mid = (low + wait) / 2.0, half = width / 2.0;
      for (int i = 0; i < 4; ++i)
        for (const double w : {mid - half * x[i], mid + half * x[i]}) integral += a[i] * half * w * std::exp(-lambda * w);
    } else {
      const auto F = [lambda](double w) { return -std::exp(-lambda * w) * (w / lambda + 1.0 / (lambda * lambda)); };
      integral = F(wait) - F(low);
    }
    const double weighted_decay = std::exp(-lambda * fixed) * integral / width;
    const Eigen::MatrixXd pi = stationary_rows(*this);
    return (wait - width / 2.0) * pi + weighted_decay * (Eigen::MatrixXd::Identity(k, k) - pi);
  }
  // Van Loan (1978): exp([[Q, I, 0], [0, 0, I], [0, 0, 0]] width) holds
  // I1 = int_0^width exp(Qs) ds in the top middle and
  // K = int_0^width (width - s) exp(Qs) ds in the top right; then
  // int_low^wait w exp(Qw) dw = exp(Q low) (low I1 + width I1 - K).
  Eigen::MatrixXd block = Eigen::MatrixXd::Zero(3 * k, 3 * k);
  block.topLeftCorner(k, k) = generator * width;
  block.block(0, k, k, k) = Eigen::MatrixXd::Identity(k, k) * width;
  block.block(k, 2 * k, k, k) = Eigen::MatrixXd::Identity(k, k) * width;
  const Eigen::MatrixXd e = block.exp();
  const Eigen::MatrixXd i1 = e.block(0, k, k, k), kk = e.block(0, 2 * k, k, k);
  return transition(fixed + low) * ((low + width) * i1 - kk) / width;
}

Eigen::MatrixXd TimeChain::law_transition(const std::vector<double>& law) const {
  RELSIM_ASSERT(!law.empty());
  Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(states(), states());
  for (const double d : law) sum += transition(d);
  return sum / static_cast<double>(law.size());
}

Eigen::MatrixXd TimeChain::law_weighted_transition(const std::vector<double>& law) const {
  RELSIM_ASSERT(!law.empty());
  Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(states(), states());
  for (const double d : law) sum += d * transition(d);
  return sum / static_cast<double>(law.size());
}

LawSteps law_steps_over(const TimeModel& time, const TimeChain& chain) {
  const LawSteps* kept = time.law_steps.get();
  const Eigen::MatrixXd& q = chain.generator;
  if (kept && kept->generator.rows() == q.rows() && kept->generator.cols() == q.cols() && kept->generator == q)
    return *kept;
  return {q, chain.law_transition(time.request_law), chain.law_weighted_transition(time.request_law)};
}

void with_law_steps(TimeModel& time) {
  time.law_steps.reset();
  if (!time.request_law.empty()) time.law_steps = std::make_shared<const LawSteps>(law_steps_over(time, time.chain));
}

TimeChain two_state_time_chain(double t_good, double t_bad, std::string_view good_name, std::string_view bad_name) {
  check_seconds(t_good, good_name, true);
  check_seconds(t_bad, bad_name, true);
  TimeChain c;
  c.generator.resize(2, 2);
  c.generator << -1.0 / t_good, 1.0 / t_good, 1.0 / t_bad, -1.0 / t_bad;
  c.bad = Eigen::Vector2d(0.0, 1.0);
  c.initial = Eigen::RowVector2d(t_good / (t_good + t_bad), t_bad / (t_good + t_bad));
  return c;
}

TimeChain uniformised_time_chain(const Eigen::MatrixXd& step, const Eigen::VectorXd& bad, double step_seconds) {
  check_seconds(step_seconds, "step-seconds", true);
  const Eigen::Index k = step.rows();
  if (k < 1 || step.cols() != k || bad.size() != k)
    throw InputError(fmt::format("hidden chain: a {}x{} step matrix with {} emission probabilities: they must agree", k,
                                 step.cols(), bad.size()));
  for (Eigen::Index i = 0; i < k; ++i) {
    if (!(bad(i) >= 0.0 && bad(i) <= 1.0))
      throw InputError(fmt::format("hidden chain: bad[{}] = {} is out of range: it must be in [0, 1]", i, bad(i)));
    for (Eigen::Index j = 0; j < k; ++j)
      if (!(step(i, j) >= 0.0 && step(i, j) <= 1.0))
        throw InputError(fmt::format("hidden chain: step[{}][{}] = {} is out of range: it must be in [0, 1]", i, j, step(i, j)));
    if (std::abs(step.row(i).sum() - 1.0) > 1e-6)
      throw InputError(fmt::format("hidden chain: row {} of the step matrix sums to {}: it must sum to 1", i, step.row(i).sum()));
  }
  TimeChain c;
  c.generator = (step - Eigen::MatrixXd::Identity(k, k)) / step_seconds;
  c.bad = bad;
  c.initial = stationary(c.generator);
  return c;
}

std::array<double, kFaultKinds> TimeModel::nan_fault_seconds() {
  std::array<double, kFaultKinds> a{};
  a.fill(std::numeric_limits<double>::quiet_NaN());
  return a;
}

namespace {

// A fault's own seconds; NaN when it takes a good request's.
double own_seconds(const TimeModel& t, FaultKind fault) {
  const double s = t.fault_seconds[static_cast<std::size_t>(fault)];
  // A stall before the first event waits for the same idle timeout as one
  // after it, unless it is given its own seconds.
  if (std::isnan(s) && fault == FaultKind::stall_first) return t.fault_seconds[static_cast<std::size_t>(FaultKind::stall)];
  return s;
}

}  // namespace

double TimeModel::seconds_of(std::optional<FaultKind> fault) const {
  if (!fault) return request_seconds;
  const double s = own_seconds(*this, *fault);
  return std::isnan(s) ? request_seconds : s;
}

bool TimeModel::drawn(std::optional<FaultKind> fault) const {
  return !request_law.empty() && (!fault || std::isnan(own_seconds(*this, *fault)));
}

double TimeModel::longest_request() const {
  double most = request_seconds;
  for (const double s : request_law) most = std::max(most, s);
  for (const double s : fault_seconds)
    if (!std::isnan(s)) most = std::max(most, s);
  return most;
}

bool TimeModel::fixed_times() const { return !backoff.jittered() && request_law.empty(); }

Wait wait_before(const TimeModel& time, const CallState& from, const CallState& to, FaultKind kind) {
  return wait_before(time.backoff, time.retry_after, from, to, kind);
}

Wait wait_before(const Backoff& backoff, double retry_after, const CallState& from, const CallState& to,
                 FaultKind kind) {
  if (to.http == from.http + 1) {
    if (kind == FaultKind::http_429 && retry_after > 0.0 && retry_after < kMaxRetryAfter) return {retry_after, 0.0};
    return {backoff.max_wait(from.http), backoff.jitter_fraction()};
  }
  RELSIM_ASSERT(to.stream == from.stream + 1);
  return {backoff.max_wait(from.stream), backoff.jitter_fraction()};
}

void validate(const TimeModel& t) {
  const Eigen::Index k = t.chain.states();
  RELSIM_ASSERT(k >= 1 && t.chain.bad.size() == k && t.chain.initial.size() == k);
  check_seconds(t.request_seconds, "request-seconds", false);
  for (const double s : t.request_law) check_seconds(s, "a recorded request's seconds", false);
  check_seconds(t.think_seconds, "think-seconds", false);
  for (int i = 0; i < kFaultKinds; ++i) {
    const double s = t.fault_seconds[static_cast<std::size_t>(i)];
    if (!std::isnan(s)) check_seconds(s, fmt::format("fault-seconds {}", to_string(static_cast<FaultKind>(i))), false);
  }
  if (!(t.retry_after >= 0.0 && t.retry_after <= kMaxSeconds))
    throw InputError(fmt::format("retry-after = {} is out of range: it must be in [0, {:g}] seconds (honoured below 60)",
                                 t.retry_after, kMaxSeconds));
  const Backoff& b = t.backoff;
  if (b.kind == Backoff::Kind::exp) {
    check_seconds(b.base, "backoff base", false);
    check_seconds(b.cap, "backoff cap", false);
    if (!(b.jitter >= 0.0 && b.jitter <= 1.0))
      throw InputError(fmt::format("backoff jitter = {} is out of range: it must be in [0, 1]", b.jitter));
  }
  if (b.kind == Backoff::Kind::list) {
    if (b.list.empty()) throw InputError("backoff list is empty: give at least one wait, e.g. list:1,2,4");
    for (const double w : b.list) check_seconds(w, "backoff list entry", false);
  }
}

std::array<double, kFaultKinds> parse_fault_seconds(std::string_view spec, double header_timeout, double idle_timeout) {
  auto out = TimeModel::nan_fault_seconds();
  if (spec == "timeouts") {
    out[static_cast<std::size_t>(FaultKind::slow_headers)] = header_timeout;
    out[static_cast<std::size_t>(FaultKind::stall)] = idle_timeout;  // stall_first too (seconds_of)
    return out;
  }
  if (spec.empty()) throw InputError("fault-seconds is empty: give KIND=SECONDS,... or timeouts");
  for (const auto part : split_commas(spec)) {
    const auto eq = part.find('=');
    if (eq == std::string_view::npos)
      throw InputError(fmt::format("fault-seconds entry '{}' is not KIND=SECONDS (e.g. stall=30,slow_headers=60) or timeouts", part));
    const FaultKind kind = parse_fault_kind(part.substr(0, eq));
    auto& slot = out[static_cast<std::size_t>(kind)];
    if (!std::isnan(slot))
      throw InputError(fmt::format("fault-seconds names {} twice: give each kind at most once", to_string(kind)));
    slot = parse_seconds(part.substr(eq + 1), fmt::format("fault-seconds {}", to_string(kind)));
  }
  return out;
}

}  // namespace relsim
