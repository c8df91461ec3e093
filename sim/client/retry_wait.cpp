// The client's wait before a retry (retry_wait.hpp).
#include "relsim/client/retry_wait.hpp"

#include "relsim/core/error.hpp"

namespace relsim {

RetryWait retry_wait(const ClientTiming& timing, double retry_after, const CallState& from, const CallState& to,
                     FaultKind kind) {
  RELSIM_ASSERT(to.used > 0);
  TimeModel rules;  // wait_before reads only the backoff and the retry-after
  rules.backoff = timing.backoff_schedule;
  rules.retry_after = retry_after;
  const Wait w = wait_before(rules, from, to, kind);
  RetryWait out;
  out.max = w.max * timing.time_scale;
  out.jitter = w.jitter;
  out.http = to.http == from.http + 1;
  out.retry = out.http ? from.http : from.stream;
  return out;
}

}  // namespace relsim
