#pragma once
// What a request costs (docs/model.md, Cost): the provider bills a request
// for its input tokens and the output tokens it streamed, at a price per
// million tokens. A request refused before the model starts (a pre-response
// or fatal fault) is not billed; a stream that breaks is billed for the
// input and the output streamed before the break, at a fraction of the
// answer set per in-stream kind (Billing::break_at); a good request for all
// of it.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "relsim/core/faults.hpp"

namespace relsim {

struct Billing {
  double input_tokens = 0.0;   // per request, a whole number >= 0
  double output_tokens = 0.0;  // of a whole answer, a whole number >= 0
  double price_in = 0.0;       // USD per million input tokens
  double price_out = 0.0;      // USD per million output tokens
  // Per in-stream kind: the share of the answer's output tokens streamed
  // before the break, in [0, 1] (the rest of the kinds are not billed).
  std::array<double, kFaultKinds> break_at = default_break_at();
  // A cached prompt prefix: `cached_tokens` of the input tokens are the same
  // in every request of a task (the system prompt, the tools). The first
  // billed request of a task writes them to the provider's cache at
  // cache_write; every billed request after it reads them at cache_read
  // (USD per million tokens). 0 tokens: no cache. The cache never expires
  // within a task.
  double cached_tokens = 0.0;
  double cache_read = 0.0, cache_write = 0.0;

  // Where relsim's mock server breaks each stream (docs/wire.md): cut after
  // the first of the answer's two text deltas (0.5), no_stop after the
  // whole answer (1), malformed, overloaded and stall before any of it (0).
  static std::array<double, kFaultKinds> default_break_at();

  // The output tokens a request of this kind is billed for (nullopt: a good
  // one): all of them, floor(break_at x output) for an in-stream kind, 0 for
  // a kind refused before the model starts.
  double billed_output(std::optional<FaultKind> kind) const;
  // Whether a request of this kind is billed at all (its input).
  static bool billed(std::optional<FaultKind> kind);
  // USD, once the prefix is cached: the input at price_in, but the cached
  // tokens at cache_read, and the output billed.
  double request_cost(std::optional<FaultKind> kind) const;
  // USD the first billed request of a task pays on top of request_cost:
  // cached_tokens x (cache_write - cache_read).
  double cache_surcharge() const;
};

// What each reply costs in nano-dollars (request_cost rounded to the
// nearest), by kind, a good reply's last (index kFaultKinds): the integer
// tallies of simulate and fleet add these, so a sum is the same whatever the
// order.
std::array<std::int64_t, kFaultKinds + 1> nano_costs(const Billing& billing);

// The cache's surcharge in nano-dollars (cache_surcharge rounded to the
// nearest), added by simulate to a task's first billed request.
std::int64_t nano_surcharge(const Billing& billing);

// Throws InputError naming a value out of range: token counts whole numbers
// in [0, 10^9], cached tokens at most the input tokens, prices finite in
// [0, 10^6], break positions in [0, 1].
void validate(const Billing& billing);

// Parses "cut=0.25,stall=0.5" into break positions: the defaults, with each
// named in-stream kind's replaced. Throws InputError for a kind that is not
// in-stream (it is never billed) or a value outside [0, 1].
std::array<double, kFaultKinds> parse_break_at(std::string_view spec);
// "cut=0.5,no_stop=1,malformed=0,overloaded=0,stall=0": every in-stream kind.
std::string break_at_string(const std::array<double, kFaultKinds>& break_at);

}  // namespace relsim
