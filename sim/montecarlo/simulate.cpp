// simulate() (simulate.hpp): checks the input, picks the path, splits this
// rank's share of the tasks over OpenMP threads, and sums the ranks. The
// simple policy runs on the chunk kernels (montecarlo/kernel.hpp), every
// other policy, and the simple one with http_400, on the general walk
// (montecarlo/simulate_policy.hpp).
#include "relsim/montecarlo/simulate.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "montecarlo/fail_task_hook.hpp"
#include "relsim/parallel/for_each_unit.hpp"
#include "montecarlo/kernel.hpp"
#include "relsim/parallel/progress.hpp"
#include "montecarlo/result.hpp"
#include "montecarlo/simulate_policy.hpp"

namespace relsim {
namespace {

using detail::kChunk;
using detail::Progress;

// What every chunk of one run of the kernels shares.
struct KernelRun {
  const DrawScheme& scheme;
  const SimConfig& config;
  std::int64_t n;
  std::size_t bins;
  const detail::FailTaskHook& hook;
  Progress progress;

  // Tasks per kernel call: a whole chunk, or, when someone watches the
  // progress, kProgressTasks so that reports come within a chunk. The
  // kernels take any count up to kChunk, and a task's draws depend on its
  // index alone (a lane's chain carried from call to call as from chunk to
  // chunk), so the counts are the same either way.
  int piece() const { return static_cast<int>(progress.wanted() ? detail::kProgressTasks : kChunk); }
};

// One thread's part of a kernel run: its totals and its kernel's scratch.
struct KernelThread {
  SimResult tally;
  std::unique_ptr<detail::FirstBlocks> blocks;     // the scalar kernel's
  std::unique_ptr<detail::VectorBuffers> buffers;  // the vector kernel's

  KernelThread(std::size_t bins, bool vector) : tally(detail::empty_result(bins)) {
    if (vector)
      buffers = std::make_unique<detail::VectorBuffers>();
    else
      blocks = std::make_unique<detail::FirstBlocks>();
  }
};

// Fresh scope: this rank's range of the fixed chunks of kChunk tasks, on the
// vector kernel where it runs, else on the scalar one.
SimResult simulate_fresh(KernelRun& run) {
  const DrawScheme& s = run.scheme;
  const SimConfig& config = run.config;
  const Kernel kernel = detail::fresh_kernel(s, config.kernel);
  std::optional<detail::VectorScheme> vector;
  if (kernel != Kernel::scalar) vector.emplace(s);
  const std::int64_t chunks = (config.tasks + kChunk - 1) / kChunk;
  const std::pair<std::int64_t, std::int64_t> range = config.share.range(chunks);
  SimResult result = detail::empty_result(run.bins);
  detail::for_each_unit(
      config.threads, range.first, range.second, [&] { return KernelThread(run.bins, vector.has_value()); },
      [&](KernelThread& thread, std::int64_t chunk) {
        const std::int64_t last = std::min<std::int64_t>(config.tasks, (chunk + 1) * kChunk);
        for (std::int64_t at = chunk * kChunk; at < last; at += run.piece()) {
          const auto first = static_cast<std::uint64_t>(at);
          const int count = static_cast<int>(std::min<std::int64_t>(run.piece(), last - at));
          run.hook.check(first, 1, count);
          if (kernel == Kernel::avx512)
            detail::fresh_chunk_avx512(s, *vector, run.n, config.seed, first, count, *thread.buffers, thread.tally);
          else if (kernel == Kernel::avx2)
            detail::fresh_chunk_avx2(s, *vector, run.n, config.seed, first, count, *thread.buffers, thread.tally);
          else
            detail::run_tasks(s, run.n, config.seed, first, 1, count, Entry::task_start, false, *thread.blocks,
                              thread.tally);
          run.progress.add(count);
        }
      },
      [&](const KernelThread& thread) { detail::add_counts(result, thread.tally); });
  result.kernel = kernel_name(kernel);
  return result;
}

// Continuous scope: this rank's range of the lanes, each lane's tasks in
// order on the scalar kernel, the chain carried from chunk to chunk.
SimResult simulate_continuous(KernelRun& run) {
  const SimConfig& config = run.config;
  const std::int64_t lanes = config.lanes;
  const std::pair<std::int64_t, std::int64_t> range = config.share.range(lanes);
  SimResult result = detail::empty_result(run.bins);
  detail::for_each_unit(
      config.threads, range.first, range.second, [&] { return KernelThread(run.bins, false); },
      [&](KernelThread& thread, std::int64_t lane) {
        // Tasks lane, lane + lanes, ... in order.
        const std::int64_t in_lane = lane < config.tasks ? (config.tasks - lane + lanes - 1) / lanes : 0;
        Entry entry = Entry::lane_start;
        for (std::int64_t j = 0; j < in_lane; j += run.piece()) {
          const int count = static_cast<int>(std::min<std::int64_t>(run.piece(), in_lane - j));
          const auto first = static_cast<std::uint64_t>(lane + j * lanes);
          run.hook.check(first, static_cast<std::uint64_t>(lanes), count);
          entry = detail::run_tasks(run.scheme, run.n, config.seed, first, static_cast<std::uint64_t>(lanes), count,
                                    entry, true, *thread.blocks, thread.tally);
          run.progress.add(count);
        }
      },
      [&](const KernelThread& thread) { detail::add_counts(result, thread.tally); });
  result.kernel = kernel_name(Kernel::scalar);
  return result;
}

// This rank's share of the run.
SimResult simulate_share(const Model& model, const Policy& policy, const SimConfig& config,
                         const detail::FailTaskHook& hook) {
  validate(model);
  validate(policy);
  validate(config);
  if (config.tools && model.chain == ChainScope::continuous)
    throw InputError("chain = continuous: tool calls (--tool-faults) are not supported yet with the continuous chain "
                     "scope; use --chain fresh");
  if (config.billing && model.chain == ChainScope::continuous)
    throw InputError("chain = continuous: the simulated cost per task (--price-in, --price-out) covers the fresh "
                     "scope only yet; use --chain fresh, or relsim exact for the cost");
  if (config.fallback) validate(*config.fallback, policy);
  if (config.fallback && model.chain == ChainScope::continuous)
    throw InputError("chain = continuous: the simulated fallback (--fallback-after) covers the fresh scope only yet; "
                     "use --chain fresh, or relsim exact");
  if (config.fallback && config.tools)
    throw InputError("fallback-after: a fallback does not cover tool calls (--tool-faults) yet; leave out one of them");
  if (config.billing && config.billing->cached_tokens > 0.0 && config.fallback)
    throw InputError("cached-tokens: a cached prefix with a fallback is not modelled yet (each provider keeps a cache "
                     "of its own); leave out one of them");
  if (config.billing && !config.share.single())
    throw InputError("the simulated cost per task (--price-in, --price-out) runs on one rank only yet: run it "
                     "without mpirun");
  const DrawScheme scheme = DrawScheme::make(model, policy, config.kinds);
  // The kernels know the simple policy's rule only: every bad request is an
  // attempt. A 400 ends a task as harness_error under every policy, so with
  // http_400 in the mix the general walk runs instead.
  // Tool calls are drawn on the general walk too, and so is a run with
  // prices: the kernels count requests, not what each costs.
  if (policy.kind != PolicyKind::simple || config.kinds.weight[static_cast<std::size_t>(FaultKind::http_400)] > 0.0 ||
      config.tools || config.billing || config.fallback) {
    SimResult walked = detail::simulate_policy(model, policy, config, scheme, hook);
    walked.kernel = "walk";
    return walked;
  }
  KernelRun run{scheme, config, policy.n, detail::histogram_bins(policy), hook, Progress(config.progress)};
  return model.chain == ChainScope::fresh ? simulate_fresh(run) : simulate_continuous(run);
}

}  // namespace

void validate(const SimConfig& c) {
  if (c.tasks < 1 || c.tasks > kMaxTasks)
    throw InputError(fmt::format("tasks = {} is out of range: tasks must be in [1, {}]", c.tasks, kMaxTasks));
  if (c.lanes < 1 || c.lanes > kMaxLanes)
    throw InputError(fmt::format("lanes = {} is out of range: lanes must be in [1, {}]", c.lanes, kMaxLanes));
  if (c.threads < 0 || c.threads > kMaxThreads)
    throw InputError(fmt::format("threads = {} is out of range: threads must be in [0, {}] (0: OpenMP's default)",
                                 c.threads, kMaxThreads));
  c.kinds.checked_total();
  if (c.tools) validate(c.tools->faults);
  if (c.billing) validate(*c.billing);
  detail::check_available(c.kernel);
}

SimResult simulate(const Model& model, const Policy& policy, const SimConfig& config) {
  const detail::FailTaskHook hook = detail::FailTaskHook::from_environment();
  SimResult result = simulate_share(model, policy, config, hook);
  if (!config.share.single()) {
    std::vector<std::int64_t> totals = detail::pack_counts(result);
    parallel::sum_all(totals, config.share);
    detail::unpack_counts(totals, result);
  }
  RELSIM_ASSERT(result.tasks == config.tasks);
  return result;
}

}  // namespace relsim
