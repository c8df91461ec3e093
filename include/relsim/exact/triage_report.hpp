#pragma once
// relsim exact --triage: a testing agent's verdict rates as a table or JSON
// (exact/triage.hpp, docs/bughunt.md).
#include <string>

#include "relsim/core/json.hpp"
#include "relsim/core/model.hpp"
#include "relsim/exact/triage.hpp"

namespace relsim {

// The chain in words: p, q (and the mean burst), the reload's delay, and
// the chain's scope.
std::string triage_chain_words(const Model& model);
Json triage_json(const Model& model, Tester tester, int reloads, const TriageRates& rates);
std::string triage_table(const Model& model, Tester tester, int reloads, const TriageRates& rates);

}  // namespace relsim
