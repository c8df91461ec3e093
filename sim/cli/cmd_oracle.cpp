// relsim oracle: predict each task's outcome and requests from a plan, without any network.
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/live/oracle.hpp"
#include "relsim/live/oracle_report.hpp"
#include "relsim/montecarlo/plan_gen.hpp"
#include "cli/commands.hpp"
#include "relsim/options/option_rules.hpp"

namespace relsim::cli {
namespace {

struct OracleArgs {
  std::string file;
  ModelArgs model;  // policy fields only
  CLI::Option *n_opt = nullptr, *r_opt = nullptr, *s_opt = nullptr, *b_opt = nullptr, *policy_opt = nullptr;
  // A scripted plan instead of the file (as relsim live --fault runs).
  std::string fault, times = "once";
  long long tasks = 1;
  CLI::Option *fault_opt = nullptr, *times_opt = nullptr, *tasks_opt = nullptr;
  ClientTiming timing;
  bool json = false, per_task = false;
  bool scripted() const { return fault_opt->count() > 0; }
};

// The plan file, or with --fault the scripted plan (then its policy is the
// options' alone, layered by default as for relsim live).
Plan oracle_plan(const OracleArgs& a) {
  // Both given: refused while parsing (add_oracle).
  if (!a.scripted() && a.file.empty())
    throw InputError("oracle: give a plan file, or --fault KIND --times once|always for a scripted plan");
  // --times and --tasks need --fault, and --fault needs --n: declared in add_oracle.
  if (!a.scripted()) return read_plan(a.file);
  ModelArgs model = a.model;
  if (!a.policy_opt->count()) model.policy_kind = "layered";
  return scripted_plan(a.tasks, parse_fault_kind(a.fault), parse_times(a.times), model.policy());
}

// Policy flags given on the command line win; the rest come from the plan's header.
Policy policy_for(const OracleArgs& a, const Plan& plan) {
  ModelArgs m = a.model;
  const Json& h = plan.header;
  // The type is checked first: get<int>() of 1e300 or of 2^40 would not throw
  // but convert out of range (undefined for a double).
  auto from_header = [&](CLI::Option* opt, const char* key, auto& field) {
    using T = std::remove_reference_t<decltype(field)>;
    if (opt->count() || !h.contains(key)) return;
    const Json& v = h[key];
    bool fits = false;
    if constexpr (std::is_integral_v<T>) {
      if (v.is_number_unsigned()) fits = std::in_range<T>(v.get<std::uint64_t>());
      else if (v.is_number_integer()) fits = std::in_range<T>(v.get<std::int64_t>());
    } else {
      fits = v.is_string();
    }
    if (!fits)
      throw InputError(fmt::format("{}: header field \"{}\" = {} has the wrong type or is out of range", a.file, key,
                                   json_excerpt(v)));
    field = v.get<T>();
  };
  from_header(a.n_opt, "n", m.n);
  from_header(a.r_opt, "r", m.r);
  from_header(a.s_opt, "s", m.s);
  from_header(a.b_opt, "B", m.B);
  from_header(a.policy_opt, "policy", m.policy_kind);
  if (!a.n_opt->count() && !h.contains("n")) throw InputError(fmt::format("{}: the plan's header has no n: give --n", a.file));
  return m.policy();
}

// A time-mode plan's waits depend on the policy it was made for: the policy
// options may only repeat its header's.
void check_time_policy(const OracleArgs& a, const Plan& plan, const Policy& policy) {
  const Json& h = plan.header;
  if (!h.contains("time")) return;
  const Json used{{"policy", std::string(to_string(policy.kind))},
                  {"n", policy.n},
                  {"r", policy.r},
                  {"s", policy.s},
                  {"B", policy.B}};
  for (auto it = used.begin(); it != used.end(); ++it)
    if (!h.contains(it.key()) || h[it.key()] != it.value())
      throw InputError(fmt::format("{}: {} = {} differs from the time-mode plan's {}: its waits and times hold for the "
                                   "policy it was made for; drop the policy options",
                                   a.file, it.key(), dump_json(it.value()),
                                   h.contains(it.key()) ? dump_json(h[it.key()]) : std::string("(none)")));
}

int run_oracle_command(const OracleArgs& a) {
  validate(a.timing);
  const Plan plan = oracle_plan(a);
  const Policy policy = policy_for(a, plan);
  check_time_policy(a, plan, policy);
  const OracleResult res = run_oracle(policy, plan, a.timing, plan_fallback_after(plan));
  const OracleReport report{.plan_path = a.scripted() ? std::string() : a.file,
                            .fault = a.fault,
                            .times = a.times,
                            .plan = &plan,
                            .policy = policy,
                            .result = &res,
                            .per_task = a.per_task};
  if (a.json) out() << dump_json(oracle_json(report)) << "\n";
  else out() << oracle_text(report);
  return 0;
}

}  // namespace

Runner add_oracle(CLI::App& app) {
  auto a = std::make_shared<OracleArgs>();
  auto* cmd = app.add_subcommand(
      "oracle",
      "predict each task's outcome, requests and longest wait from a plan file, or from a scripted plan\n"
      "  (--fault KIND --times once|always: the fault on each task's first request or on every one, as relsim live\n"
      "  --fault runs it)");
  auto* plan = cmd->add_option("plan", a->file, "plan file (JSON Lines, from relsim plan); or give --fault");
  a->fault_opt = cmd->add_option("--fault", a->fault, "instead of a plan file: a scripted plan with this fault kind");
  refuse_with(plan, a->fault_opt, "oracle: give a plan file or --fault KIND --times once|always, not both");
  a->times_opt = cmd->add_option("--times", a->times, "with --fault: once or always")->capture_default_str();
  a->tasks_opt = cmd->add_option("--tasks", a->tasks, fmt::format("with --fault: tasks, in [1, {}]", kMaxPlanTasks))
                     ->capture_default_str();
  a->policy_opt = cmd->add_option("--policy", a->model.policy_kind,
                                  "simple, naive, layered or budgeted; default: the plan's (with --fault: layered)");
  a->n_opt = cmd->add_option("--n", a->model.n, "calls per task; default: the plan's (with --fault: required)");
  a->r_opt = cmd->add_option("--r", a->model.r, "stream-layer retries; default: the plan's (with --fault: 0)");
  a->s_opt = cmd->add_option("--s", a->model.s, "HTTP-layer retries; default: the plan's, else 2");
  a->b_opt = cmd->add_option("--B", a->model.B, "budgeted: requests per call; default: the plan's");
  add_timing_options(*cmd, a->timing);
  cmd->add_flag("--json", a->json, "print one JSON object");
  cmd->add_flag("--per-task", a->per_task, "list every task's outcome, requests and longest wait");
  for (CLI::Option* scripted_only : {a->times_opt, a->tasks_opt})
    needs_option(scripted_only, a->fault_opt,
                 fmt::format("oracle: {} applies to a scripted plan only: give --fault KIND", scripted_only->get_name()));
  needs_option(a->fault_opt, a->n_opt,
               fmt::format("oracle --fault: give --n, the model calls per task, in [1, {}]", kMaxCalls));
  return [a] { return run_oracle_command(*a); };
}

}  // namespace relsim::cli
