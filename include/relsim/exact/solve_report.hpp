#pragma once
// What relsim exact --solve prints (solve.hpp): the search's answer as JSON
// and in words, after the model and the policy it was searched for.
#include <string>

#include "relsim/core/json.hpp"
#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/exact/solve.hpp"

namespace relsim {

// {"solve": "r", "target": .., "found": true, "value": .., "success": ..,
// "mean_requests": .., "below": {"value", "success", "mean_requests"} or
// null, "low": .., "limit": .., "evaluations": .., "note": ..}; value,
// success and mean_requests are null when nothing meets the target.
Json solve_json(const SolveResult& result);
// The same in words: one line for the answer, one for the value below it.
std::string solve_words(const SolveResult& result);


// relsim exact --solve --json: `head` (the model and policy searched, as
// model_json or time_head_json give them) with the parameter's value (null
// when nothing meets the target) and solve_json's fields.
Json solve_answer_json(Json head, const SolveResult& result);
// The same as text: the model in words (solve_model_words, or the time
// chain's), the policy at the answer (at the limit when there is none), then
// solve_words.
std::string solve_answer_text(const SolveResult& result, std::string model_words, const Policy& base);
// The discrete model in words; b is left out when it is what was searched.
std::string solve_model_words(const Model& model, SolveParam param);

}  // namespace relsim
