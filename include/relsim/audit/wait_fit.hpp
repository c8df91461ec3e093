#pragma once
// The waits between a client's retries, read from its log (docs/audit.md,
// Waits): which backoff family explains them and with what parameters, and
// whether the client waited the retry-after the server sent with a 429.
//
// The families are those `--backoff` knows (time_model.hpp): none, the SDKs'
// `sdk`, exp:B,C,J (min(B 2^k, C) (1 - J U): J = 0 no jitter, 0.5 the form
// (1 + U) (B/2) 2^k, 1 full jitter) over a grid of round bases and caps, and
// a list (one wait per retry number, the median observed). The fit takes the
// greatest likelihood less half a log(retries) per free parameter (BIC): a
// wait is the schedule's (uniform over its jitter) plus the client's own
// delay (exponential, its mean profiled over 2 ms to 0.5 s), or with
// probability 1% an outlier uniform over 10 minutes; ties go to the fewest
// free parameters, then the order above. The wait check's
// windows (audit.hpp, WaitWindow) then say which waits the result explains.
#include <optional>
#include <string>
#include <vector>

#include "relsim/core/time_model.hpp"
#include "relsim/audit/audit.hpp"

namespace relsim {

// Seconds an outlier's wait is taken to be spread over.
inline constexpr double kOutlierSeconds = 600.0;

struct BackoffFit {
  Backoff backoff;          // model seconds (the client's waits / time_scale)
  int parameters = 0;       // free parameters (0 for none and sdk)
  std::int64_t explained = 0;  // retries inside its windows
  double log_likelihood = 0.0;
  double delay = 0.0;  // the client's mean delay past the schedule, seconds (the profile's maximum)
};

// What a retry after an http_429 waited: the backoff, or a retry-after header.
enum class RetryAfterUse { backoff, retry_after, retry_after_ms };
std::string_view to_string(RetryAfterUse use);

struct RetryAfterReading {
  std::int64_t retries = 0;  // HTTP-layer retries of an http_429
  // Of those, the ones each hypothesis explains best (its wait likeliest under it).
  std::int64_t backoff = 0, retry_after = 0, retry_after_ms = 0;
  RetryAfterUse use = RetryAfterUse::backoff;  // the verdict: the most held; the backoff on a tie
  bool told_apart = false;  // some wait is 10 times likelier under the verdict than under any other
  std::optional<double> wait;  // seconds waited under the verdict (nullopt: the backoff)
};

struct WaitFit {
  bool fitted = false;  // false: the schedule was given (--backoff)
  std::int64_t retries = 0;
  BackoffFit best;
  RetryAfterReading retry_after;
  std::int64_t outside = 0;  // retries outside their window under the result
};

// Fits the schedule (when `fit_backoff`, else scores timing's) and reads the
// retry-after, over the retries of every task consistent with
// options.policy. Deterministic.
WaitFit fit_waits(const Plan& plan, const Observations& obs, const AuditOptions& options, bool fit_backoff);
// The same over retries already collected, and the retry-after headers sent.
WaitFit fit_retries(const std::vector<ObservedRetry>& retries, const RetryAfterSent& sent, const AuditOptions& options,
                    bool fit_backoff);
// The options with the fit's schedule and retry-after wait.
AuditOptions with_waits(AuditOptions options, const WaitFit& fit);

// "(1 + U) 1 s 2^k, no cap", "2 s 2^k, no jitter, no cap", "the SDKs' min(0.5 s 2^k, 8 s) (1 - U/4)", ...
std::string describe_backoff(const Backoff& backoff);

}  // namespace relsim
