#pragma once
// Seeded Monte Carlo of every policy (docs/model.md, Monte Carlo). Randomness is a
// pure function of (seed, task index, stream, draw index) through
// Philox4x32-10 (Salmon et al. 2011, see rng.hpp), so results are
// byte-identical for any thread count. Totals are integers.
//
// The draw scheme (docs/methods.md): each model call takes one 53-bit
// uniform u from the chain stream, and its attempt j (0-based) is bad exactly
// when u < t_j, where t_j = P(the call's first j + 1 requests are all bad | how
// the call was entered). Each bad request then takes one 32-bit word from the
// kind stream. DrawScheme holds the thresholds; trace_task replays a task
// request by request, as a plan generator must.
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "relsim/core/billing.hpp"
#include "relsim/core/fallback.hpp"
#include "relsim/core/faults.hpp"
#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/core/tool_faults.hpp"
#include "relsim/parallel/parallel.hpp"

namespace relsim {

inline constexpr std::int64_t kMaxTasks = 1'000'000'000'000;  // 10^12
inline constexpr int kMaxLanes = 1'000'000;
inline constexpr int kMaxThreads = 1024;
// Request-count histograms are kept up to this many requests per task.
inline constexpr std::int64_t kMaxHistogramRequests = 1'000'000;

// The chunk kernel that runs the simple policy's fresh scope (docs/methods.md,
// Kernels): the fastest this CPU runs (automatic), or one named (--kernel,
// for benchmarks and checks). Every kernel makes the same draws: the same
// seed gives the same totals on each.
enum class Kernel { automatic, scalar, avx2, avx512 };
std::string_view kernel_name(Kernel k);  // "auto", "scalar", "avx2", "avx512"
// The kernel of that name; InputError naming the choices for any other.
Kernel parse_kernel(std::string_view name);
// Whether this CPU runs it (automatic and scalar: always).
bool kernel_available(Kernel k);

struct SimConfig {
  std::int64_t tasks = 400;       // in [1, kMaxTasks]
  std::uint64_t seed = rng::kReferenceSeed;  // the Philox key
  // Continuous chain scope: tasks are split into this many independent
  // chains, task i in lane i mod lanes, each lane's chain running on from
  // task to task (gap g between them). A lane's first task starts from the
  // stationary law of the hidden state at a task's first request
  // (continuous_start in exact.hpp), so every task, not only the long-run
  // average, has the exact engine's law. Never tied to the thread count.
  // Ignored for the fresh scope. In [1, kMaxLanes].
  int lanes = 16;
  int threads = 0;  // 0: OpenMP's default; in [0, kMaxThreads]
  FaultWeights kinds = FaultWeights::in_stream_uniform();
  // Called now and then from one thread with the number of tasks finished so
  // far; for a progress display only (it cannot change any result).
  std::function<void(std::int64_t)> progress;
  // MPI ranks sharing the run (parallel.hpp): rank k runs a contiguous range
  // of the fixed 1024-task chunks (fresh) or of the lanes (continuous), and
  // the integer totals are summed over the ranks, so every rank returns the
  // whole run's result, the same for any number of ranks. Progress counts
  // this rank's tasks only.
  parallel::Share share;
  // Tool calls after each successful model call (docs/tool_model.md), each
  // drawn from Stream::tool_stage by (task, call); fresh scope only
  // (InputError for the continuous one). Runs on the general walk.
  std::optional<ToolModel> tools;
  // What each task costs (docs/model.md, Cost): SimResult::cost_done and
  // cost_failed. Runs on the general walk; fresh scope, one rank only
  // (InputError otherwise).
  std::optional<Billing> billing;
  // A second provider after `after` failed requests of a call (docs/model.md,
  // Fallback): each request's three chains drawn step by step from
  // Stream::fallback_chain (docs/methods.md). Runs on the general walk; fresh
  // scope only (InputError otherwise).
  std::optional<Fallback> fallback;
  // The fresh scope's kernel; InputError when the CPU lacks the one named.
  Kernel kernel = Kernel::automatic;
};

// Throws InputError naming the bad field and its valid range.
void validate(const SimConfig& config);

struct SimResult {
  // The kernel that ran: "scalar", "avx2" or "avx512" (the chunk kernels
  // of the simple policy), "walk" (the general walk: any other policy,
  // http_400 in the mix, tool calls).
  std::string kernel;
  std::int64_t tasks = 0;
  std::int64_t successes = 0;
  std::int64_t requests = 0;                       // requests sent, all tasks
  std::int64_t calls_succeeded = 0;                // calls that got a good request (= good requests)
  std::int64_t second_requests = 0;                // with a fallback: requests sent to the second provider
  std::array<std::int64_t, kFaultKinds> faults{};  // bad requests by kind
  // Tasks by request count: done_by_requests[m], env_by_requests[m], m in
  // 0 .. policy.max_requests() (left empty above kMaxHistogramRequests).
  // Where a task can end other than done or env_error (the naive, layered
  // and budgeted policies, and any policy with http_400 in the mix),
  // env_by_requests counts every task that did not finish (env_error,
  // harness_error, crash, hang).
  std::vector<std::int64_t> done_by_requests, env_by_requests;
  // Tasks by outcome class (index_of in policy.hpp), when outcomes_by_class:
  // the runs just named. Otherwise (the simple policy without http_400) the
  // outcomes are successes and env_errors().
  std::array<std::int64_t, kOutcomeClasses> outcomes{};
  bool outcomes_by_class = false;
  // With tool calls: tasks by ToolClass (a tool call ended them, or
  // silent_wrong: done with a corrupted result). They are counted in no
  // class of `outcomes`, not in successes, and in env_by_requests.
  std::array<std::int64_t, kToolClasses> tool_outcomes{};
  // With SimConfig::billing: tasks by cost in nano-dollars (each request's
  // cost rounded to the nano-dollar), those that ended done and the rest.
  std::map<std::int64_t, std::int64_t> cost_done, cost_failed;

  // Continuous scope: consecutive pairs of tasks in a lane, by the earlier
  // task's outcome (index 0 env_error, 1 done), and how many of them were
  // followed by a success. Zero for the fresh scope.
  std::array<std::int64_t, 2> pairs_after{}, done_after{};

  std::int64_t env_errors() const { return tasks - successes; }
  // In a continuous lane a task ends in a good request exactly when it
  // succeeds, so the successes of a lane form a two-state Markov chain whose
  // lag-k correlation is lambda^k, lambda = P(done | done before) -
  // P(done | env_error before); estimated here from the pairs (0 when a side
  // has no pairs). Its variance inflation (design effect) for the success
  // count is (1 + lambda) / (1 - lambda), with lambda clamped to [-0.99, 0.99];
  // 1 for the fresh scope.
  double lag_correlation() const;
  double design_effect() const;
  std::int64_t bad_requests() const;  // sum of faults
  // bad_requests() / requests: the share of sent requests that failed (0 when none was sent).
  double fault_share() const;
};

// Throws InputError for an invalid model, policy or config. With
// config.share of several ranks, every rank of it must call this alike.
SimResult simulate(const Model& model, const Policy& policy, const SimConfig& config);

// How a call is entered, which fixes the law of its first request.
enum class Entry : std::uint8_t {
  task_start,  // first call of a fresh task: bad with probability p (stationary)
  after_good,  // after a good request (previous call succeeded): P^(1+g)[good, bad]
  after_bad,   // continuous scope, after a task that failed: P^(1+g)[bad, bad]
  lane_start,  // continuous scope, first task of a lane: continuous_start(...)[bad]
};
inline constexpr int kEntries = 4;

// Everything a draw turns into, precomputed from (model, policy, weights) in
// double precision by a fixed sequence of operations, so that any program
// linking relsim rebuilds the same thresholds bit for bit.
struct DrawScheme {
  int r = 0;
  // threshold[e * (r + 1) + j] = t_j for entry e: t_0 = P(first request bad),
  // t_j = t_(j-1) * P^(1+b)[bad, bad].
  std::vector<double> threshold;
  // The kind cuts (kind_cuts in faults.hpp).
  KindCuts cut{};
  // guide[w >> 24]: the kind of the smallest word with those top 8 bits, where
  // the search for kind(w) can start (Chen & Asau 1974).
  std::array<std::uint8_t, 256> guide{};

  // Uses policy.r (and, for the continuous scope's lane_start, the whole
  // policy through continuous_start); any policy kind is accepted, so that
  // plans for the layered policies draw the same way.
  static DrawScheme make(const Model& model, const Policy& policy, const FaultWeights& kinds);

  const double* thresholds(Entry e) const { return threshold.data() + static_cast<int>(e) * (r + 1); }
  // Number of leading bad attempts of a call with uniform u: a in 0..r means
  // success at attempt a (a + 1 requests), r + 1 means the call failed.
  int bad_run(Entry e, double u) const {
    const double* t = thresholds(e);
    int a = 0;
    while (a <= r && u < t[a]) ++a;
    return a;
  }
  FaultKind kind(std::uint32_t word) const {
    int k = guide[word >> 24];
    while (word >= cut[static_cast<std::size_t>(k)]) ++k;
    return static_cast<FaultKind>(k);
  }
};

struct RequestDraw {
  std::int64_t call = 0;  // 0-based call of the task
  int attempt = 0;        // 0-based attempt of the call
  bool bad = false;
  FaultKind kind = FaultKind::cut;  // meaningful when bad
};

struct TaskTrace {
  std::int64_t task = 0;
  Entry entry = Entry::task_start;  // how its first call was entered
  Outcome outcome = Outcome::done;
  std::vector<RequestDraw> requests;  // in the order sent
};

// Task `task` of simulate(model, policy, config), request by request, from
// the same draws. In the continuous scope its lane is replayed from the lane's
// first task, O(task / lanes) calls. Throws InputError when task is outside
// [0, config.tasks).
TaskTrace trace_task(const Model& model, const Policy& policy, const SimConfig& config, std::int64_t task);

}  // namespace relsim
