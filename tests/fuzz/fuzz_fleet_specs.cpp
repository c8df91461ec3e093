// libFuzzer target: relsim fleet's word-and-numbers options (scenario.hpp):
// --start (coordinated[:WINDOW], poisson:RATE), --throttle (none, aws,
// grpc:MAX,RATIO, budget:RATIO[,MIN]) and --trigger (none,
// outage:START,LENGTH). The first byte picks the parser, the rest is the
// option's text. InputError is their answer to bad input; anything else
// escaping, a crash or a sanitizer report is a bug, and so is an accepted
// value outside the header's documented ranges, or one that does not print
// and parse back to itself.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "relsim/core/error.hpp"
#include "relsim/fleet/scenario.hpp"

namespace {

using namespace relsim::fleet;

bool finite_in(double x, double lo, double hi) { return std::isfinite(x) && x >= lo && x <= hi; }

void check_start(std::string_view spec) {
  const Start s = parse_start(spec);
  if (s.kind == Start::Kind::coordinated && !finite_in(s.window, 0.0, 3600.0)) std::abort();
  if (s.kind == Start::Kind::poisson && !(finite_in(s.rate, 0.0, 1e7) && s.rate > 0.0)) std::abort();
  const Start back = parse_start(to_string(s));
  if (back.kind != s.kind || back.window != s.window || back.rate != s.rate) std::abort();
}

void check_throttle(std::string_view spec) {
  const Throttle t = parse_throttle(spec);
  if (t.kind == Throttle::Kind::grpc &&
      !(finite_in(t.max_tokens, 0.0, 1e6) && t.max_tokens > 0.0 && t.token_ratio > 0.0 && t.token_ratio <= t.max_tokens))
    std::abort();
  if (t.kind == Throttle::Kind::budget &&
      !(finite_in(t.ratio, 0.0, 1.0) && t.ratio > 0.0 && t.min_retries >= 0 && t.min_retries <= 1'000'000))
    std::abort();
  const Throttle back = parse_throttle(to_string(t));
  if (back.kind != t.kind || back.max_tokens != t.max_tokens || back.token_ratio != t.token_ratio ||
      back.ratio != t.ratio || back.min_retries != t.min_retries)
    std::abort();
}

void check_trigger(std::string_view spec) {
  const Trigger t = parse_trigger(spec);
  if (t.active() && !(finite_in(t.start, 0.0, kMaxForcedDuration) && finite_in(t.length, 0.0, kMaxForcedDuration) &&
                      t.length > 0.0))
    std::abort();
  const Trigger back = parse_trigger(to_string(t));
  if (back.start != t.start || back.length != t.length) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view spec(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 3) {
      case 0: check_start(spec); break;
      case 1: check_throttle(spec); break;
      case 2: check_trigger(spec); break;
    }
  } catch (const relsim::InputError&) {
  }
  return 0;
}
