// The fault chain walked live, request by request (request_chain.hpp).
#include "relsim/core/request_chain.hpp"

#include <string>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/model.hpp"

namespace relsim {

RequestChain::RequestChain(const RequestChainConfig& config) : config_(config) {
  Model m;
  m.p = config.p;
  m.q = config.q;
  validate(m);
  p0_ = m.p0();
  cut_ = kind_cuts(config.kinds);
}

std::optional<FaultKind> RequestChain::at(std::int64_t task, std::int64_t index, bool previous_bad) const {
  const double threshold = index == 0 ? config_.p : previous_bad ? config_.q : p0_;
  const auto t = static_cast<std::uint64_t>(task), k = static_cast<std::uint64_t>(index);
  if (!(rng::uniform(config_.seed, rng::Stream::request_chain, t, k) < threshold)) return std::nullopt;
  return kind_of_word(cut_, rng::kind_word(config_.seed, t, k));
}

std::vector<std::optional<FaultKind>> RequestChain::first(std::int64_t task, std::int64_t count) const {
  std::vector<std::optional<FaultKind>> out;
  out.reserve(static_cast<std::size_t>(count));
  for (std::int64_t k = 0; k < count; ++k) out.push_back(at(task, k, k > 0 && out.back().has_value()));
  return out;
}

Json to_json(const RequestChainConfig& c) {
  return Json{{"p", c.p}, {"q", c.q}, {"seed", c.seed}, {"kinds", to_string(c.kinds)}};
}

RequestChainConfig request_chain_from_json(const Json& j, std::string_view where) {
  const auto field = [&](const char* name) -> const Json& {
    const auto it = j.is_object() ? j.find(name) : j.end();
    if (it == j.end()) throw InputError(fmt::format("{}: the chain has no \"{}\"", where, name));
    return *it;
  };
  RequestChainConfig c;
  const Json &p = field("p"), &q = field("q"), &seed = field("seed"), &kinds = field("kinds");
  if (!p.is_number() || !q.is_number())
    throw InputError(fmt::format("{}: the chain's p and q must be numbers in [0, 1]", where));
  if (!seed.is_number_unsigned())
    throw InputError(fmt::format("{}: the chain's seed must be an integer in [0, 2^64)", where));
  if (!kinds.is_string()) throw InputError(fmt::format("{}: the chain's kinds must be a string such as cut=1", where));
  c.p = p.get<double>();
  c.q = q.get<double>();
  c.seed = seed.get<std::uint64_t>();
  c.kinds = parse_fault_weights(kinds.get<std::string>());
  RequestChain check(c);  // p, q and the weights, with the model's own messages
  return c;
}

}  // namespace relsim
