#pragma once
// The client's clock (docs/model.md, Live check): its timeouts and its backoff
// schedule. The oracle bounds a task's waiting time with these; the live
// client runs by them. All in seconds; time_scale shrinks backoff for tests.
#include <algorithm>
#include <cmath>

namespace relsim {

struct ClientTiming {
  double connect_timeout = 10.0;
  double header_timeout = 60.0;  // request sent -> status line and headers
  double idle_timeout = 30.0;    // between two stream events
  double call_timeout = 600.0;   // one model call, all its retries
  double task_timeout = 3600.0;  // the whole task (its deadline)
  // Backoff before retry k (0-based) of a layer, after the Anthropic SDKs:
  // min(base 2^k, cap) (1 - 0.25 U), U uniform in [0, 1), times time_scale.
  double backoff_base = 0.5;
  double backoff_cap = 8.0;
  double time_scale = 1.0;

  double backoff_max(int retry) const {
    return std::min(backoff_base * std::pow(2.0, retry), backoff_cap) * time_scale;
  }
  double backoff(int retry, double u) const { return backoff_max(retry) * (1.0 - 0.25 * u); }
};

// Throws InputError unless every timeout is > 0 and finite, base and cap >= 0,
// and time_scale > 0.
void validate(const ClientTiming& timing);

}  // namespace relsim
