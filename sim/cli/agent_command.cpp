// relsim contention run --agent-cmd (agent_command.hpp): the user's agent,
// one process per agent, watched for its deadline and, in crash-mid-write,
// killed while it holds a lock.
#include "cli/agent_command.hpp"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "cli/child_process.hpp"

namespace relsim::cli {
namespace {

const std::vector<std::string> kPlaceholders{"{tools_url}", "{tenant}",     "{agent}",       "{task}",     "{scenario}",
                                             "{seed}",      "{increments}", "{burst_calls}", "{model_url}"};

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

}  // namespace

std::vector<std::string> parse_agent_command(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  if (words.empty()) throw InputError("agent-cmd = '' is empty: give a command, e.g. 'node agent.mjs --mcp {tools_url} --tenant {tenant}'");
  for (const char* needed : {"{tools_url}", "{tenant}"})
    if (text.find(needed) == std::string::npos)
      throw InputError(fmt::format("agent-cmd = '{}' has no {}: each agent must be told its {} (placeholders: {})",
                                   text.substr(0, 200), needed, needed[1] == 't' && needed[2] == 'o' ? "tools URL" : "tenant",
                                   "{tools_url}, {tenant}, {agent}, {task}, {scenario}, {seed}, {increments}, {burst_calls}, "
                                   "{model_url}"));
  static const std::regex placeholder(R"(\{[A-Za-z_]+\})");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), placeholder); it != std::sregex_iterator(); ++it) {
    const std::string p = it->str();
    if (std::find(kPlaceholders.begin(), kPlaceholders.end(), p) == kPlaceholders.end())
      throw InputError(fmt::format("agent-cmd: {} is not a placeholder: use {{tools_url}}, {{tenant}}, {{agent}}, "
                                   "{{task}}, {{scenario}}, {{seed}}, {{increments}}, {{burst_calls}} or {{model_url}}",
                                   p));
  }
  return words;
}

bool wants_model(const std::vector<std::string>& words) {
  return std::any_of(words.begin(), words.end(), [](const std::string& w) { return w.find("{model_url}") != std::string::npos; });
}

contention::AgentReport run_agent_command(const std::vector<std::string>& words, const contention::ContentionConfig& c,
                                          const contention::AgentSlot& slot, int model_port) {
  const int t = slot.index % c.tenants;
  const std::string tenant = fmt::format("t{}", t), agent = fmt::format("a{}", slot.index);
  const std::pair<std::string, std::string> values[] = {
      {"{tools_url}", fmt::format("http://127.0.0.1:{}/t/{}/a/{}/mcp", slot.port, tenant, agent)},
      {"{tenant}", tenant},
      {"{agent}", agent},
      {"{task}", std::to_string(slot.index)},
      {"{scenario}", std::string(to_string(c.scenario))},
      {"{seed}", std::to_string(c.seed)},
      {"{increments}", std::to_string(c.increments)},
      {"{burst_calls}", std::to_string(c.burst_calls)},
      {"{model_url}", fmt::format("http://127.0.0.1:{}/t/{}", model_port, slot.index)}};
  std::vector<std::string> argv;
  for (std::string w : words) {
    for (const auto& [from, to] : values) w = replace_all(std::move(w), from, to);
    argv.push_back(std::move(w));
  }
  contention::AgentReport r;
  r.agent = slot.index;
  r.tenant = t;
  ChildProcess child(argv, {}, true);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(c.deadline_s);
  const bool dies = c.scenario == contention::Scenario::crash_mid_write && slot.index % 5 == 4;
  int code = 0;
  while (!child.ended(code)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      r.stuck = true;
      child.signal(SIGKILL);
    } else if (dies && !r.crashed && slot.holds_lock(agent)) {
      r.crashed = true;  // killed holding its lock, as a crash would
      child.signal(SIGKILL);
    }
    child.drain();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // Its last line of output, if JSON: {"done": bool, "stale": bool}.
  std::string line, last;
  while (child.read_line(line))
    if (!line.empty()) last = line;
  const Json report = Json::parse(last, nullptr, false);
  const auto flag = [&](const char* key) -> std::optional<bool> {
    if (!report.is_object() || !report.contains(key) || !report[key].is_boolean()) return std::nullopt;
    return report[key].get<bool>();
  };
  r.done = code == 0 && !r.stuck && !r.crashed && flag("done").value_or(true);
  r.stale_accepted = flag("stale").value_or(false);
  return r;
}

}  // namespace relsim::cli
