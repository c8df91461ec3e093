// relsim tune's search widened where its answer lies on a bound (tune.hpp,
// run_tune_widening).
#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "relsim/sweep/tune.hpp"

namespace relsim {
namespace {

// One bound of the space: the best value's on it, and what it could grow to.
struct Bound {
  const char* name;  // "s" or "r"
  int TuneSpace::*max;
  int cap;
  bool matters;
  int best;
};

// The bound doubled, within its cap and the requests a call may send with
// the other bound; the same value when it cannot grow.
int widened(const TuneSpace& space, const Bound& b) {
  const int other = b.max == &TuneSpace::s_max ? space.r_max : space.s_max;
  const int by_requests = kMaxRequestsPerCall / (other + 1) - 1;
  return std::min({2 * (space.*b.max), b.cap, by_requests});
}

// A bound widened: from `at` to `to`, with no schedule meeting the target
// (`none`) or with the best on it.
struct Widening {
  const char* name;
  int at, to;
  bool none;
};

std::string widening_note(const Widening& w, int last_to, const TuneResult& last) {
  const std::string why = w.none ? fmt::format("no schedule met the target with {} up to --{}-max {}", w.name, w.name, w.at)
                                 : fmt::format("the best {} = {} was on the search bound (--{}-max {})", w.name, w.at,
                                               w.name, w.at);
  const std::string to = last_to == w.to ? std::to_string(w.to) : fmt::format("{} and then {}", w.to, last_to);
  if (last.front.empty()) return fmt::format("{}: widened to {}, still none", why, to);
  const Policy& best = last.front[0].schedule.policy;
  return fmt::format("{}: widened to {}, the best is {} = {}", why, to, w.name, *w.name == 's' ? best.s : best.r);
}

}  // namespace

TuneResult run_tune_widening(TuneSpace& space, const TuneConfig& config,
                             const std::function<void(std::int64_t, std::int64_t)>& progress) {
  std::vector<Widening> widenings;
  for (;;) {
    TuneResult result = run_tune(space, config, progress);
    // With no schedule meeting the target, the nearest to it has the most
    // retries (more never lowers success): both bounds count as reached.
    const bool none = result.front.empty();
    const Policy best = none ? Policy{} : result.front[0].schedule.policy;
    Bound bounds[] = {{"s", &TuneSpace::s_max, kMaxHttpRetries, result.s_matters, none ? space.s_max : best.s},
                      {"r", &TuneSpace::r_max, kMaxWidenedR, result.r_matters, none ? space.r_max : best.r}};
    bool again = false;
    std::vector<std::string> stuck;
    for (const Bound& b : bounds) {
      const int at = space.*b.max;
      if (!b.matters || at == 0 || b.best != at) continue;
      const int to = widened(space, b);
      TuneSpace wider = space;
      wider.*b.max = to;
      if (to > at && (config.force || count_tune_schedules(wider, config.kinds) <= kMaxTuneSchedules)) {
        widenings.push_back({b.name, at, to, none});
        space = wider;
        again = true;
      } else {
        stuck.push_back(none ? fmt::format("no schedule meets the target with {} up to --{}-max {}, which cannot "
                                           "widen further here",
                                           b.name, b.name, at)
                             : fmt::format("the best {} = {} is on the search bound (--{}-max {}), which cannot "
                                           "widen further here: a larger {} may do better",
                                           b.name, at, b.name, at, b.name));
      }
    }
    if (!again) {
      std::vector<std::string> notes;
      for (const std::string_view name : {"s", "r"}) {  // one note per bound, however often it widened
        const Widening* first = nullptr;
        int last_to = 0;
        for (const Widening& x : widenings)
          if (name == x.name) {
            if (!first) first = &x;
            last_to = x.to;
          }
        if (first) notes.push_back(widening_note(*first, last_to, result));
      }
      notes.insert(notes.end(), stuck.begin(), stuck.end());
      result.notes.insert(result.notes.begin(), notes.begin(), notes.end());
      return result;
    }
  }
}

}  // namespace relsim
