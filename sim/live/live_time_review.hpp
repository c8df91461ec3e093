#pragma once
// Internal to the live check in time mode (live_time.hpp): one task's
// requests, as the server logged them, held against the schedule (redrawn
// from the seed), the policy's rules over the replies they got, and the
// waits the client owes between them.
#include <cstdint>

#include "relsim/core/time_model.hpp"
#include "relsim/live/live_time.hpp"
#include "relsim/core/outage.hpp"
#include "relsim/server/server.hpp"

namespace relsim::live_time {

// Running sums for the means of TimeLiveWaits.
struct Sums {
  double residual = 0.0, step = 0.0;
};

void review_task(const TimeModel& model, OutageSchedule& schedule, const TaskLog& log, const LiveTask& live,
                 Sums& sums, TimeLiveCheck& out);

}  // namespace relsim::live_time
