// relsim contention run's engine (contention.hpp): a tools server in this
// process, the agents on threads, then the scores.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "relsim/contention/contention.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/files.hpp"
#include "relsim/tools/mcp_service.hpp"
#include "relsim/ui/ui_server.hpp"

namespace relsim::contention {
namespace {

namespace fs = std::filesystem;

// A temporary folder for the sandbox (and the log, unless one is asked
// for), removed at the end.
struct Scratch {
  fs::path dir;
  Scratch() {
    std::string name = (fs::temp_directory_path() / "relsim-contention-XXXXXX").string();
    if (!::mkdtemp(name.data())) throw InputError("cannot make a temporary folder for the tools server's sandbox");
    dir = name;
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
};

std::vector<Json> read_log(const fs::path& file) {
  std::vector<Json> lines;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    Json j = Json::parse(line, nullptr, false);
    if (!j.is_discarded()) lines.push_back(std::move(j));
  }
  return lines;
}

std::shared_ptr<tools::McpService> make_service(const ContentionConfig& c, const fs::path& box, const fs::path& log) {
  tools::ToolsConfig tc;
  tc.sandbox = box;
  tc.log = log;
  tc.shared.queue_order = c.scenario == Scenario::out_of_order ? tools::QueueOrder::shuffled : tools::QueueOrder::fifo;
  tc.shared.seed = c.seed;
  if (c.scenario == Scenario::burst) tc.quota = c.quota;
  return std::make_shared<tools::McpService>(tc, tools::ToolFaultSource{});
}

// The counters' final values, summed: the naive agents' one key and the
// careful agents' one per tenant (an agent of --agent-cmd uses either);
// with think_s, a sum for each round.
std::vector<std::int64_t> counted(const ContentionConfig& c, const tools::McpService& service) {
  if (c.scenario != Scenario::interleaved) return {0};
  const auto value = [&](const std::string& key) -> std::int64_t {
    const tools::ScratchEntry e = service.peek(key);
    return e.version ? std::atoll(e.value.c_str()) : 0;
  };
  std::vector<std::int64_t> sums;
  for (int round = rounds(c) > 0 ? 0 : -1; round < rounds(c); ++round) {
    std::int64_t sum = value(counter_key(-1, round));
    for (int t = 0; t < c.tenants; ++t) sum += value(counter_key(t, round));
    sums.push_back(sum);
  }
  return sums;
}

// Both ends of every agent's connection are in this process (and a pipe per
// program with --agent-cmd): the soft limit on descriptors is raised to what
// the run needs, as far as the hard limit allows, or the run is refused.
void enough_descriptors(const ContentionConfig& c) {
  const int at_once = c.concurrency > 0 ? c.concurrency : c.agents;
  const auto needed = static_cast<rlim_t>(4 * at_once + 64);
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur >= needed) return;
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed)
    throw InputError(fmt::format("agents at once = {} need {} file descriptors and the hard limit is {}: lower "
                                 "--concurrency or raise the limit (ulimit -Hn)",
                                 at_once, needed, limit.rlim_max));
  limit.rlim_cur = needed;
  ::setrlimit(RLIMIT_NOFILE, &limit);
}

// One of the tools server's scenarios: the server, the agents, the scores.
// The call log goes to `log` (else into the scratch folder); its lines,
// read once for the scores, are left in `lines` when asked for.
ContentionScores run_tools(const ContentionConfig& config, const std::optional<fs::path>& log,
                           const std::function<void(int, int)>& progress, const AgentRunner& runner,
                           std::vector<Json>* lines = nullptr) {
  enough_descriptors(config);
  const Scratch scratch;
  const fs::path log_file = log ? *log : scratch.dir / "calls.jsonl";
  auto service = make_service(config, scratch.dir / "box", log_file);
  ui::UiConfig uc;
  uc.site = ui::Site::tools;
  uc.port = 0;
  uc.threads = 2;
  // Every agent at once may hold a connection, and one being closed while
  // its next opens: over the cap a new connection is closed unread, and
  // the agent's call is lost on the way (a load run saw 2 of 8,004; with a
  // cap of 8, 6,723 of 15,188).
  const std::size_t at_once = static_cast<std::size_t>(config.concurrency > 0 ? config.concurrency : config.agents);
  uc.max_connections = std::min<std::size_t>(10'000, 2 * at_once + 64);
  uc.tools = service;
  ui::UiServer server(uc, ui::CommandRunner([](const std::vector<std::string>&, const ui::CommandHooks&) {
                        return ui::CommandResult{2, "", "the tools server runs no command", ""};
                      }));
  const auto start = std::chrono::steady_clock::now();
  std::vector<AgentReport> reports(static_cast<std::size_t>(config.agents));
  std::atomic<int> next{0};
  std::mutex report_mu;
  int finished = 0;
  const int workers = config.concurrency > 0 ? config.concurrency : config.agents;
  FirstError error;  // an agent that throws (a program that cannot start) stops the others from starting
  const auto agents_start = std::chrono::steady_clock::now() +
                            std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(start_delay_seconds(config)));
  {
    std::vector<std::jthread> threads;
    threads.reserve(static_cast<std::size_t>(workers));
    for (int w = 0; w < workers; ++w)
      threads.emplace_back([&] {
        for (int i = next++; i < config.agents && !error.failed(); i = next++)
          error.run([&] {
            const AgentSlot slot{server.port(), i,
                                 [&service](const std::string& agent) { return service->holds_lock(agent); },
                                 agents_start};
            reports[static_cast<std::size_t>(i)] = runner ? runner(config, slot) : run_reference_agent(config, slot);
            std::lock_guard lock(report_mu);
            if (progress) progress(++finished, config.agents);
          });
      });
  }
  error.rethrow();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::vector<std::int64_t> total = counted(config, *service);
  std::int64_t held = 0;  // locks that will never expire (TTL 0) held after every agent stopped
  for (const auto& [name, holder] : service->held_locks()) held += holder.ttl_ms == 0;
  server.stop();
  std::vector<Json> logged = read_log(log_file);
  ContentionScores s = score(config, std::move(reports), logged, total, held);
  if (lines) *lines = std::move(logged);
  s.seconds = seconds;
  return s;
}

constexpr Scenario kEach[] = {Scenario::interleaved,  Scenario::probe_pairs, Scenario::crash_mid_write,
                              Scenario::out_of_order, Scenario::burst,       Scenario::long_short};

// mixed: the six in turn, the tools server's call log of each kept with
// its scenario named on every line.
ContentionScores run_mixed(const ContentionConfig& config, const std::optional<std::string>& log,
                           const std::function<void(int, int)>& progress, const AgentRunner& runner) {
  ContentionScores all;
  all.config = config;
  std::string lines;
  const int total = static_cast<int>(std::size(kEach)) * config.agents;
  int before = 0;
  for (const Scenario scenario : kEach) {
    ContentionConfig c = config;
    c.scenario = scenario;
    const auto step = [&](int done, int) {
      if (progress) progress(before + done, total);
    };
    if (scenario == Scenario::long_short) {
      merge_into(all, run_long_short(c, step));
    } else {
      std::vector<Json> logged;
      merge_into(all, run_tools(c, std::nullopt, step, runner, &logged));
      for (Json& line : logged) {
        line["scenario"] = to_string(scenario);
        lines += line.dump() + "\n";
      }
    }
    before += config.agents;
  }
  if (log) write_file_atomically(*log, lines);
  return all;
}

}  // namespace

double start_delay_seconds(const ContentionConfig& c) {
  const bool timed = c.call_rate > 0 || c.think_s > 0;
  return timed ? 0.1 + 0.0005 * (c.concurrency > 0 ? c.concurrency : c.agents) : 0.0;
}

ContentionScores run_contention(const ContentionConfig& config, const std::optional<std::string>& log,
                                const std::function<void(int, int)>& progress, const AgentRunner& runner) {
  validate(config);
  if (config.scenario == Scenario::long_short) return run_long_short(config, progress);
  if (config.scenario == Scenario::mixed) return run_mixed(config, log, progress, runner);
  return run_tools(config, log ? std::optional<fs::path>(*log) : std::nullopt, progress, runner);
}

}  // namespace relsim::contention
