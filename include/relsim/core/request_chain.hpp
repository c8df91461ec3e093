#pragma once
// The fault chain walked live, request by request, as relsim proxy's chain
// mode does (docs/proxy.md, Chain mode): a server cannot tell a retry from
// the next call, so each task's requests, in the order they arrive, are the
// chain's steps. Request 0 of a task is bad with probability p (the chain's
// stationary law: the fresh scope of docs/model.md), a request after a bad
// one with q, after a good one with p0 = p(1-q)/(1-p); b = g = 0.
//
// The draws (docs/methods.md): request k of task t is bad when uniform k of
// Philox stream `request_chain` for counter task t is below that
// probability, and a bad request's kind is word k of stream `kind` for task t
// cut by the weights (kind_cuts), as outage mode draws kinds. So a task's
// faults are a pure function of (seed, task, k), whatever the order in which
// the tasks' requests interleave, and the plan of what the server served and
// would have served next (plan_of_chain_log in audit/audit.hpp) can be
// drawn again from the log's header.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "relsim/core/faults.hpp"
#include "relsim/core/json.hpp"
#include "relsim/core/rng.hpp"

namespace relsim {

struct RequestChainConfig {
  double p = 0.0, q = 0.0;
  std::uint64_t seed = rng::kReferenceSeed;
  FaultWeights kinds = FaultWeights::in_stream_uniform();
};

class RequestChain {
 public:
  // Throws InputError naming a bad p, q (as validate(Model)) or weight.
  explicit RequestChain(const RequestChainConfig& config);
  const RequestChainConfig& config() const { return config_; }
  // Request `index` of `task`, the one before it bad or not (ignored for index 0).
  // nullopt: good; else the fault kind.
  std::optional<FaultKind> at(std::int64_t task, std::int64_t index, bool previous_bad) const;
  // The task's first `count` requests.
  std::vector<std::optional<FaultKind>> first(std::int64_t task, std::int64_t count) const;

 private:
  RequestChainConfig config_;
  double p0_ = 0.0;
  KindCuts cut_{};
};

// {"p", "q", "seed", "kinds"} (kinds as to_string(FaultWeights)), and back;
// from_json throws InputError naming the field that is missing or wrong.
Json to_json(const RequestChainConfig& config);
RequestChainConfig request_chain_from_json(const Json& j, std::string_view where);

}  // namespace relsim
