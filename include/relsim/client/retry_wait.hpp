#pragma once
// The wait a client owes before a retry, on the client's clock, and the
// window an observed wait must fall in. One rule for the audit's wait check
// (docs/audit.md) and the live check in time mode (docs/model.md, Live
// check): the core's wait_before (time_model.hpp) — which layer retries,
// its retry number, the backoff schedule, retry-after for http_429 — times
// the client's time_scale.
#include "relsim/core/faults.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/client/timing.hpp"

namespace relsim {

struct RetryWait {
  double max = 0.0;     // wall seconds: the wait at U = 0
  double jitter = 0.0;  // the client waits max (1 - jitter U), U uniform on [0, 1)
  int retry = 0;        // the retrying layer's retry number k (its backoff index)
  bool http = false;    // the HTTP layer retries; else the stream layer

  double shortest() const { return max * (1.0 - jitter); }
  // An observed wait is accepted in [shortest - below, max + above].
  bool accepts(double waited, double below, double above) const {
    return waited >= shortest() - below && waited <= max + above;
  }
};

// The wait before the request that follows a bad request of `kind` sent from
// call state `from`, which the policy moved to `to` (a retry of the same
// call: to.used > 0). `retry_after`: the retry-after the server sends with
// http_429, model seconds (0: none; honoured in (0, 60) as the SDKs do).
RetryWait retry_wait(const ClientTiming& timing, double retry_after, const CallState& from, const CallState& to,
                     FaultKind kind);

}  // namespace relsim
