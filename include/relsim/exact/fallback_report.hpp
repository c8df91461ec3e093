#pragma once
// A fallback to a second provider as the exact and simulate reports give it
// (docs/model.md, Fallback): the JSON's "fallback" and the table's row.
#include <string>

#include "relsim/core/fallback.hpp"
#include "relsim/core/json.hpp"

namespace relsim {

// The fallback as given, in steps (p2, q2, shared_p, shared_q) or in seconds
// (t_good2, t_bad2, shared_t_good, shared_t_bad), with each provider's
// long-run share of bad requests. `p`: the first provider's share without
// the shared outage.
Json fallback_json(double p, const Fallback& fallback);
// The same in words, for the table's "fallback" row.
std::string fallback_words(double p, const Fallback& fallback);

}  // namespace relsim
