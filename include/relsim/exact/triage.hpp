#pragma once
// A testing agent's verdicts when the application's API fails for
// environmental reasons (docs/bughunt.md): one page load is one step of the
// fault chain, bad with the chain's probability; a failed load shows that
// loading failed. Two rule-based testers:
// - naive: one load; a failed load or a wrong total is BUG, else PASS;
// - careful: a failed load (a network failure, a 5xx, a timeout) is
//   reloaded, up to `reloads` times; still failing is ENV_ERROR ("cannot
//   tell"); a load that works is PASS or BUG by the total it shows.
// The buggy version shows a wrong total on every load that works, the
// healthy one the right total.
//
// Exactly: the rates of each verdict for each version, over the chain's
// steps: `b` silent steps between two loads of a run (the reload's delay),
// fresh (each run from the stationary law) or continuous (runs one after
// another on one chain, `g` silent steps between the last load of a run and
// the first of the next: a run's start then depends on how the run before
// it ended).
#include <cstdint>
#include <string_view>
#include <vector>

#include "relsim/core/model.hpp"

namespace relsim {

enum class Tester { naive, careful };
enum class AppVersion { healthy, buggy };
enum class Verdict { pass, bug, env_error };

// Throw InputError naming the word and the choices.
Tester parse_tester(std::string_view word);
AppVersion parse_app_version(std::string_view word);
std::string_view to_string(Tester tester);
std::string_view to_string(AppVersion version);
std::string_view to_string(Verdict verdict);

inline constexpr int kMaxReloads = 1000;

// The oracle of one run: the verdict the tester reaches, and how many loads
// it made, reading `failed` (whether each load failed, in order) as far as
// it needs. Throws InputError when `failed` runs out first or reloads is out
// of [0, kMaxReloads].
struct RunVerdict {
  Verdict verdict = Verdict::pass;
  int loads = 0;
};
RunVerdict judge(Tester tester, int reloads, AppVersion version, const std::vector<bool>& failed);

// The rates of one version's verdicts.
struct VerdictRates {
  double pass = 0.0, bug = 0.0, env_error = 0.0;
  double mean_loads = 0.0;
};
struct TriageRates {
  VerdictRates healthy, buggy;
  double false_bug() const { return healthy.bug; }    // a product bug reported where there is none
  double missed_bug() const { return buggy.pass; }    // the real bug passed
};

// Throws InputError for an invalid model (validate) or reloads out of range.
TriageRates triage_exact(const Model& model, Tester tester, int reloads);

}  // namespace relsim
