// simulate() through the general walk (montecarlo/simulate_policy.hpp): the
// naive, layered and budgeted policies, whose fault kinds decide the
// retries, and the simple policy with http_400 in the mix. The simple
// policy's chunk kernels (montecarlo/kernel.hpp) draw the same numbers.
#include "montecarlo/simulate_policy.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <utility>

#include "relsim/core/error.hpp"
#include "relsim/parallel/for_each_unit.hpp"
#include "montecarlo/fallback_walk.hpp"
#include "montecarlo/kernel.hpp"
#include "montecarlo/policy_walk.hpp"
#include "relsim/parallel/progress.hpp"
#include "montecarlo/result.hpp"

namespace relsim::detail {
namespace {

// What every task of one simulate_policy() call shares.
struct PolicyRun {
  const DrawScheme& s;
  const Policy& policy;
  const SimConfig& config;
  const FailTaskHook& hook;
  Progress& progress;
  // With a billing: what a request costs in nano-dollars, [lane][kind] or
  // [lane][kFaultKinds] for a good one; lane 1 is a fallback's second provider.
  std::array<std::array<std::int64_t, kFaultKinds + 1>, 2> nano{};
  std::int64_t cache_write = 0;  // nano-dollars a task's first billed request adds (nano_surcharge)
  // With a fallback: its draws (the task is walked by walk_fallback_task).
  std::optional<FallbackDraws> fallback;

  // Walks task `task` into `tally`; returns whether it ended done.
  // Whether the task ended done, and where the chain stood: after a bad
  // request (a task that failed, or one whose last call took a content
  // fault's answer) or a good one.
  struct Ended {
    bool done = false;
    bool last_bad = true;
  };
  Ended add_task(SimResult& tally, std::int64_t task, Entry entry) const {
    hook.check(static_cast<std::uint64_t>(task), 1, 1);
    const auto t = static_cast<std::uint64_t>(task);
    // The tool call after each successful model call: its fault, and for a
    // partial write whether the undo fails, from the task's tool stream.
    std::optional<ToolClass> tool_end;
    bool corrupted = false;
    const auto after_call = [&](std::int64_t c) {
      if (!config.tools) return true;
      const auto call = static_cast<std::uint64_t>(c);
      const ToolFault fault = draw_tool_fault(config.tools->faults, rng::tool_uniform(config.seed, t, call, 0));
      const bool undo_fails = fault == ToolFault::partial_write &&
                              rng::tool_uniform(config.seed, t, call, 1) < config.tools->faults.rollback;
      const ToolStep step = tool_step(config.tools->harness, fault, undo_fails);
      corrupted = corrupted || step.corrupted;
      tool_end = step.ended;
      return !step.ended;
    };
    std::int64_t cost = 0;
    bool written = false;  // the cached prefix (Billing::cached_tokens)
    const auto sent_request = [&](const std::optional<FaultKind>& r, int lane) {
      if (r) ++tally.faults[static_cast<std::size_t>(*r)];
      tally.second_requests += lane;
      cost += nano[static_cast<std::size_t>(lane)][r ? static_cast<std::size_t>(*r) : static_cast<std::size_t>(kFaultKinds)];
      if (!written && Billing::billed(r)) {
        cost += cache_write;
        written = true;
      }
    };
    const TaskRunner runner =
        fallback ? walk_fallback_task(
                       *fallback, policy, config.seed, task,
                       [&](const std::array<std::optional<FaultKind>, 2>& replies, int lane) {
                         sent_request(replies[static_cast<std::size_t>(lane)], lane);
                       },
                       after_call)
                 : walk_policy_task(
                       s, policy, config.seed, task, entry,
                       [&](const std::optional<FaultKind>& r, bool sent) {
                         if (sent) sent_request(r, 0);
                       },
                       after_call);
    const auto bill = [&](bool done) {
      if (config.billing) ++(done ? tally.cost_done : tally.cost_failed)[cost];
    };
    if (tool_end || (corrupted && runner.outcome().outcome == Outcome::done)) {
      ++tally.tasks;
      tally.requests += runner.requests();
      tally.calls_succeeded += runner.call();
      ++tally.tool_outcomes[static_cast<std::size_t>(tool_end.value_or(ToolClass::silent_wrong))];
      if (!tally.env_by_requests.empty()) ++tally.env_by_requests[static_cast<std::size_t>(runner.requests())];
      bill(false);
      return {};
    }
    RELSIM_ASSERT(runner.ended());
    const bool done = runner.outcome().outcome == Outcome::done;
    ++tally.tasks;
    tally.successes += done ? 1 : 0;
    tally.requests += runner.requests();
    tally.calls_succeeded += runner.call();
    ++tally.outcomes[static_cast<std::size_t>(index_of(runner.outcome()))];
    if (!tally.done_by_requests.empty())
      ++(done ? tally.done_by_requests : tally.env_by_requests)[static_cast<std::size_t>(runner.requests())];
    bill(done);
    return {done, runner.last_request_bad()};
  }

  // Fresh scope: the tasks of chunk `chunk` (the kernels' chunks of kChunk).
  void add_chunk(SimResult& tally, std::int64_t chunk) const {
    const std::int64_t last = std::min(config.tasks, (chunk + 1) * kChunk);
    UnitProgress reported(progress);
    for (std::int64_t t = chunk * kChunk; t < last; ++t) {
      add_task(tally, t, Entry::task_start);
      reported.task();
    }
    reported.finish();
  }

  // Continuous scope: tasks lane, lane + lanes, ... in order, the chain
  // carried between them.
  void add_lane(SimResult& tally, std::int64_t lane) const {
    Entry entry = Entry::lane_start;
    int previous = -1;  // the earlier task's outcome: 0 not done, 1 done
    UnitProgress reported(progress);
    for (std::int64_t t = lane; t < config.tasks; t += config.lanes) {
      const auto [done, last_bad] = add_task(tally, t, entry);
      if (previous >= 0) {
        ++tally.pairs_after[static_cast<std::size_t>(previous)];
        tally.done_after[static_cast<std::size_t>(previous)] += done ? 1 : 0;
      }
      previous = done ? 1 : 0;
      entry = last_bad ? Entry::after_bad : Entry::after_good;
      reported.task();
    }
    reported.finish();
  }
};

}  // namespace

SimResult simulate_policy(const Model& model, const Policy& policy, const SimConfig& config, const DrawScheme& s,
                          const FailTaskHook& hook) {
  const std::size_t bins = histogram_bins(policy);
  SimResult result = empty_result(bins);
  result.outcomes_by_class = true;
  Progress progress(config.progress);
  PolicyRun run{s, policy, config, hook, progress, {}, 0, std::nullopt};
  if (config.billing) {
    const Billing billing[] = {*config.billing, config.fallback ? second_billing(*config.billing, *config.fallback)
                                                                : *config.billing};
    for (std::size_t lane = 0; lane < 2; ++lane) run.nano[lane] = nano_costs(billing[lane]);
    run.cache_write = nano_surcharge(*config.billing);
  }
  if (config.fallback) run.fallback = FallbackDraws::make(model, *config.fallback, config.kinds);
  const bool fresh = model.chain == ChainScope::fresh;
  const std::int64_t units = fresh ? (config.tasks + kChunk - 1) / kChunk : config.lanes;
  const std::pair<std::int64_t, std::int64_t> range = config.share.range(units);
  for_each_unit(
      config.threads, range.first, range.second, [&] { return empty_result(bins); },
      [&](SimResult& tally, std::int64_t unit) { fresh ? run.add_chunk(tally, unit) : run.add_lane(tally, unit); },
      [&](const SimResult& tally) { add_counts(result, tally); });
  return result;
}

}  // namespace relsim::detail
