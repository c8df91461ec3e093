#pragma once
// The client's clock (docs/model.md, Live check): its timeouts, its backoff
// schedule and its pause between calls. The oracle bounds a task's waiting
// time with these; the live client runs by them. All in seconds; time_scale
// shrinks backoff (and the pause between calls) for tests: the schedule is in
// model seconds, and one model second lasts time_scale wall seconds.
#include "relsim/core/time_model.hpp"

namespace relsim {

struct ClientTiming {
  double connect_timeout = 10.0;
  double header_timeout = 60.0;  // request sent -> status line and headers
  double idle_timeout = 30.0;    // between two stream events
  double call_timeout = 600.0;   // one model call, all its retries
  double task_timeout = 3600.0;  // the whole task (its deadline)
  // Backoff before retry k (0-based) of a layer (time_model.hpp): by default
  // the Anthropic SDKs' min(0.5 2^k, 8) (1 - 0.25 U), U uniform in [0, 1);
  // times time_scale.
  Backoff backoff_schedule = Backoff::sdk();
  // Model seconds from the end of a call's good answer to the next call's
  // first request (time mode's --think-seconds); times time_scale.
  double think_seconds = 0.0;
  double time_scale = 1.0;

  double backoff_max(int retry) const { return backoff_schedule.max_wait(retry) * time_scale; }
  double backoff(int retry, double u) const {
    return backoff_max(retry) * (1.0 - backoff_schedule.jitter_fraction() * u);
  }
  double think() const { return think_seconds * time_scale; }
};

// Throws InputError unless every timeout is > 0 and finite, time_scale > 0,
// the backoff's base, cap and list entries in [0, 1e9] (a list of 1 to 1000
// entries), its jitter in [0, 1], and think_seconds in [0, 1e9].
void validate(const ClientTiming& timing);

}  // namespace relsim
