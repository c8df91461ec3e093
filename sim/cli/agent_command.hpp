#pragma once
// Internal to the CLI: relsim contention run --agent-cmd TEMPLATE
// (docs/contention.md, "Your own agent"). The template is split into words
// at spaces (no shell: no quotes, pipes or variables) and each word's
// placeholders filled in per agent: {tools_url} (required; the agent's own
// http://127.0.0.1:PORT/t/TENANT/a/AGENT/mcp), {tenant} (required), {agent},
// {task}, {scenario}, {seed}, {increments}, {burst_calls}, and {model_url}
// (http://127.0.0.1:PORT/t/TASK of a mock provider the run starts, with
// a healthy stream for every request). One process per
// agent; one still running at --deadline is killed and counted deadlocked;
// in crash-mid-write every fifth agent is killed (SIGKILL) as soon as the
// server says it holds a lock. Its exit code 0 means done, unless its last
// line of output is a JSON object with "done": false; "stale": true there
// says it took a stale result.
#include <string>
#include <vector>

#include "relsim/contention/contention.hpp"

namespace relsim::cli {

// The template's words; throws InputError for an empty template, one
// without {tools_url} or {tenant}, or an unknown placeholder.
std::vector<std::string> parse_agent_command(const std::string& text);

// Whether the words ask for {model_url}.
bool wants_model(const std::vector<std::string>& words);

// `model_port`: the mock provider's, when the words ask for {model_url}.
contention::AgentReport run_agent_command(const std::vector<std::string>& words, const contention::ContentionConfig& c,
                                          const contention::AgentSlot& slot, int model_port = 0);

}  // namespace relsim::cli
