#include "relsim/core/policy.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "relsim/core/error.hpp"

namespace relsim {

std::string_view to_string(PolicyKind kind) {
  switch (kind) {
    case PolicyKind::simple: return "simple";
    case PolicyKind::naive: return "naive";
    case PolicyKind::layered: return "layered";
    case PolicyKind::budgeted: return "budgeted";
  }
  return "?";
}

PolicyKind parse_policy_kind(std::string_view word) {
  for (auto k : {PolicyKind::simple, PolicyKind::naive, PolicyKind::layered, PolicyKind::budgeted})
    if (word == to_string(k)) return k;
  throw InputError(fmt::format("policy = '{}' is not a policy: use simple, naive, layered or budgeted", word));
}

int Policy::max_requests_per_call() const {
  if (kind == PolicyKind::simple) return r + 1;
  const int rounds = (s + 1) * (r + 1);
  return kind == PolicyKind::budgeted ? std::min(B, rounds) : rounds;
}

void validate(const Policy& policy) {
  if (policy.n < 1 || policy.n > kMaxCalls)
    throw InputError(fmt::format("n = {} is out of range: n must be in [1, {}]", policy.n, kMaxCalls));
  if (policy.r < 0 || policy.r > kMaxRetries)
    throw InputError(fmt::format("r = {} is out of range: r must be in [0, {}]", policy.r, kMaxRetries));
  if (policy.kind == PolicyKind::simple) return;
  if (policy.s < 0 || policy.s > kMaxHttpRetries)
    throw InputError(fmt::format("s = {} is out of range: s must be in [0, {}]", policy.s, kMaxHttpRetries));
  if ((policy.s + 1) * (policy.r + 1) > kMaxRequestsPerCall)
    throw InputError(fmt::format("(s+1)(r+1) = {} is out of range for the {} policy: it must be at most {}",
                                 (policy.s + 1) * (policy.r + 1), to_string(policy.kind), kMaxRequestsPerCall));
  if (policy.kind == PolicyKind::budgeted && (policy.B < 1 || policy.B > kMaxRequestsPerCall))
    throw InputError(fmt::format("B = {} is out of range for the budgeted policy: B must be in [1, {}]", policy.B,
                                 kMaxRequestsPerCall));
}

std::string describe(const Policy& policy) {
  if (policy.kind == PolicyKind::simple)
    return fmt::format("simple, n = {} calls, r = {} retries", policy.n, policy.r);
  return fmt::format("{}, n = {} calls, s = {} HTTP retries, r = {} stream retries{}", to_string(policy.kind),
                     policy.n, policy.s, policy.r,
                     policy.kind == PolicyKind::budgeted ? fmt::format(", B = {} per call", policy.B) : "");
}

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::done: return "done";
    case Outcome::env_error: return "env_error";
    case Outcome::harness_error: return "harness_error";
    case Outcome::crash: return "crash";
    case Outcome::hang: return "hang";
    case Outcome::partial_done: return "partial_done";
  }
  return "?";
}

bool is_wrong(Outcome outcome) {
  return outcome == Outcome::crash || outcome == Outcome::hang || outcome == Outcome::partial_done;
}

std::string OutcomeClass::name() const {
  return kind ? fmt::format("{}:{}", to_string(outcome), to_string(*kind)) : std::string(to_string(outcome));
}

// Layout: done, harness_error, hang, partial_done, env_error:<kind>..., crash:<kind>...
int index_of(const OutcomeClass& c) {
  switch (c.outcome) {
    case Outcome::done: return 0;
    case Outcome::harness_error: return 1;
    case Outcome::hang: return 2;
    case Outcome::partial_done: return 3;
    case Outcome::env_error: RELSIM_ASSERT(c.kind); return 4 + static_cast<int>(*c.kind);
    case Outcome::crash: RELSIM_ASSERT(c.kind); return 4 + kFaultKinds + static_cast<int>(*c.kind);
  }
  return -1;
}

OutcomeClass outcome_class(int index) {
  RELSIM_ASSERT(index >= 0 && index < kOutcomeClasses);
  if (index == 0) return {Outcome::done, std::nullopt};
  if (index == 1) return {Outcome::harness_error, std::nullopt};
  if (index == 2) return {Outcome::hang, std::nullopt};
  if (index == 3) return {Outcome::partial_done, std::nullopt};
  if (index < 4 + kFaultKinds) return {Outcome::env_error, static_cast<FaultKind>(index - 4)};
  return {Outcome::crash, static_cast<FaultKind>(index - 4 - kFaultKinds)};
}

namespace {

Reaction end_with(Outcome outcome, std::optional<FaultKind> kind) {
  return {false, false, OutcomeClass{outcome, kind}, {}};
}

Reaction retry_http(const CallState& st) { return {false, false, std::nullopt, {st.http + 1, st.stream, st.used + 1}}; }

Reaction retry_stream(const CallState& st) { return {false, false, std::nullopt, {0, st.stream + 1, st.used + 1}}; }

bool is_connection_or_timeout(FaultKind k) {
  return k == FaultKind::cut || k == FaultKind::no_stop || k == FaultKind::malformed ||
         k == FaultKind::slow_headers || k == FaultKind::reset;
}

}  // namespace

Reaction react(const Policy& policy, const CallState& st, std::optional<FaultKind> fault) {
  if (!fault) return {true, false, std::nullopt, {}};
  const FaultKind kind = *fault;
  // A 400 is the caller's bug: never retried, raised to the harness.
  if (stage_of(kind) == Stage::fatal) return end_with(Outcome::harness_error, std::nullopt);
  const bool pre = stage_of(kind) == Stage::pre_response;
  switch (policy.kind) {
    case PolicyKind::simple:
      return st.stream < policy.r ? retry_stream(st) : end_with(Outcome::env_error, kind);
    case PolicyKind::naive:
      // A whole 200 stream is an answer to a loop that checks nothing.
      if (stage_of(kind) == Stage::content) return {true, true, std::nullopt, {}};
      if (pre && st.http < policy.s) return retry_http(st);
      // What escapes the HTTP layer: the stream layer catches only connection
      // and timeout errors; a status error or an in-stream `event: error`
      // escapes as a crash, and without an idle timeout a stall hangs.
      if (kind == FaultKind::stall || kind == FaultKind::stall_first) return end_with(Outcome::hang, std::nullopt);
      if (!is_connection_or_timeout(kind)) return end_with(Outcome::crash, kind);
      return st.stream < policy.r ? retry_stream(st) : end_with(Outcome::crash, kind);
    case PolicyKind::layered:
    case PolicyKind::budgeted: {
      // The stream layer checks the answer: its stop reason and its tool
      // arguments. A text delta sent twice reads as text, and passes.
      if (kind == FaultKind::duplicate_event) return {true, true, std::nullopt, {}};
      // Each fault is retried by exactly one layer.
      Reaction next;
      if (pre) next = st.http < policy.s ? retry_http(st) : end_with(Outcome::env_error, kind);
      else next = st.stream < policy.r ? retry_stream(st) : end_with(Outcome::env_error, kind);
      if (policy.kind == PolicyKind::budgeted && !next.ended && st.used + 1 >= policy.B)
        return end_with(Outcome::env_error, kind);
      return next;
    }
  }
  return end_with(Outcome::crash, kind);
}

bool TaskRunner::feed(std::optional<FaultKind> fault) {
  RELSIM_ASSERT(!ended_);
  const Reaction re = react(policy_, state_, fault);
  ++requests_;
  last_bad_ = fault.has_value();
  if (re.ended) {
    ended_ = true;
    outcome_ = *re.ended;
  } else if (re.call_done) {
    state_ = {};
    trusted_bad_ = trusted_bad_ || re.trusted_bad;
    if (++call_ == policy_.n) {
      ended_ = true;
      outcome_ = {trusted_bad_ ? Outcome::partial_done : Outcome::done, std::nullopt};
    }
  } else {
    state_ = re.next;
  }
  return !ended_;
}

}  // namespace relsim
