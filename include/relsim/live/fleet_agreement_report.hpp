#pragma once
// What relsim fleet --live prints (fleet_agreement.hpp): the live run as
// relsim fleet prints a simulation, then the server's log and each figure
// against the simulated replicates' spread; as one JSON object (--json) or
// a table.
#include <string>

#include "relsim/core/json.hpp"
#include "relsim/live/fleet_agreement.hpp"

namespace relsim {

// fleet::fleet_json's object for the live run (without "events", which it
// has none of), then "live" (time scale, wall and stream seconds, the
// replayed replicate, wrong answers, the server's log, "log_agrees",
// "log_problems"), "simulated" (fleet_json of the replicates pooled),
// "agreement" (one object per figure) and "agrees" (run.agrees()).
Json fleet_agreement_json(const FleetAgreementRun& run);

std::string fleet_agreement_table(const FleetAgreementRun& run);

}  // namespace relsim
