#pragma once
// The MCP tools server's shared tools (docs/contention.md, "Shared tools"):
// state that every agent and tenant of one server shares, where a
// sequential eval sees nothing wrong and many agents at once collide.
//
//   scratch_get(key)                    {"found", "value", "version"}
//   scratch_put(key, value)             {"version"}
//   scratch_cas(key, version, value)    {"stored", "version"}: stored only if version is the key's (0: absent)
//   scratch_list(prefix)                {"keys", "more"}: at most 1000, in order
//   cache_put(scope, query, answer)     {"stored"}
//   cache_get(scope, query)             {"hit", "answer", "similarity"}
//   lock_acquire(name, ttl_ms)          {"acquired", "token", "expires_in_ms"}: ttl_ms 0 never expires
//   lock_release(name, token)           {"released", "reason"}
//   job_submit(queue, input)            {"ticket"}
//   job_next(queue)                     {"ticket", "input", "result"}: ticket null when none is pending
//
// Results are JSON text in the tool's text content. Keys, scopes, lock and
// queue names are stored exactly as written (scratchpad.hpp,
// semantic_cache.hpp, lock_table.hpp, result_queue.hpp): the server knows
// each caller's tenant and agent from its URL (/t/TENANT/a/AGENT/mcp) and
// logs them beside what each call touched, but never adds them to a key.
#include <cstdint>
#include <string>
#include <string_view>

#include "relsim/core/json.hpp"
#include "relsim/tools/lock_table.hpp"
#include "relsim/tools/result_queue.hpp"
#include "relsim/tools/scratchpad.hpp"
#include "relsim/tools/semantic_cache.hpp"
#include "relsim/tools/tool_catalog.hpp"

namespace relsim::tools {

// Who calls: from the URL's /t/TENANT/a/AGENT/ (plain /mcp: "-" and "-").
struct Caller {
  std::string tenant = "-";
  std::string agent = "-";
};

struct SharedConfig {
  double cache_threshold = 0.8;  // in (0, 1]
  QueueOrder queue_order = QueueOrder::fifo;
  std::uint64_t seed = 0;        // the shuffled queues' draws
};

// A shared tool's run: what the client reads, and for the call log what it
// touched and what happened (docs/contention.md, "The call log").
struct SharedRun {
  ToolRun run;
  std::string key;      // the key, scope, lock or queue named; empty if the arguments were refused
  std::string outcome;  // found, absent, stored, conflict, full, listed, hit, miss, acquired, took_expired, busy,
                        // released, expired, not_held, submitted, delivered, empty, half_written, failed
                        // (a tool that writes nothing, under partial_write) or refused
  Json facts = Json::object();  // other_tenant, version, partial, similarity, owner, stale, ...
};

class SharedTools {
 public:
  explicit SharedTools(SharedConfig config);

  static bool has(std::string_view name);
  static Json list();  // their tools/list entries

  // Runs shared tool `name` (has) for `caller` at `now_ms` (the server's
  // milliseconds since start). With `half_write` (the partial_write fault)
  // a writing tool stores the first half of its value and fails at exec;
  // any other fails as with exec_error.
  SharedRun run(std::string_view name, const Json& arguments, const Caller& caller, std::int64_t now_ms,
                bool half_write);

  const LockTable& locks() const { return locks_; }
  const Scratchpad& scratchpad() const { return scratch_; }

 private:
  SharedRun scratch(std::string_view name, const Json& args, const Caller& caller, bool half_write);
  SharedRun cache(std::string_view name, const Json& args, const Caller& caller, bool half_write);
  SharedRun lock(std::string_view name, const Json& args, const Caller& caller, std::int64_t now_ms);
  SharedRun job(std::string_view name, const Json& args, const Caller& caller);

  Scratchpad scratch_;
  SemanticCache cache_;
  LockTable locks_;
  ResultQueues queues_;
};

}  // namespace relsim::tools
