#pragma once
// The result queues of the MCP tools server's shared tools
// (docs/contention.md, "Shared tools"): an agent submits work to a named
// queue and later takes a result from it, as with a slow tool whose
// answers come back through a job queue. A queue's name is what the agent
// writes, so agents that leave their own name or tenant out of it share
// one queue and can take each other's results.
//
// The result of input X is `result(X)`, whatever the order. In order
// `fifo` a queue gives back its pending results in the order they were
// submitted; in order `shuffled` each take picks one of the pending
// results at random: the k-th take from queue Q uses uniform k of Philox
// stream 15 (tool_queue) under the server's seed, with Q's FNV-1a hash as
// the task, so a seed and a sequence of calls give the same deliveries.
// Every result carries its ticket (1, 2, ... per queue) and its input, so
// a careful agent can tell a stale result from the one it is waiting for.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>

namespace relsim::tools {

inline constexpr std::size_t kMaxQueued = 100'000;  // pending results over all queues

enum class QueueOrder { fifo, shuffled };
std::string_view to_string(QueueOrder order);
QueueOrder parse_queue_order(std::string_view word);  // throws InputError naming the two words

struct QueuedResult {
  std::uint64_t ticket = 0;  // 0: nothing was pending
  std::string input, result;
  std::string tenant, agent;  // who submitted it
};

class ResultQueues {
 public:
  ResultQueues(QueueOrder order, std::uint64_t seed) : order_(order), seed_(seed) {}

  // The new result's ticket, or 0 when kMaxQueued results are pending.
  std::uint64_t submit(std::string_view queue, std::string input, std::string tenant, std::string agent);
  // A pending result (ticket 0 if none). `newest` is the queue's last
  // ticket handed out, so a caller can see a result older than it.
  QueuedResult take(std::string_view queue, std::uint64_t& newest);

 private:
  struct Queue {
    std::deque<QueuedResult> pending;
    std::uint64_t tickets = 0, takes = 0;
  };
  QueueOrder order_;
  std::uint64_t seed_;
  std::map<std::string, Queue, std::less<>> queues_;
  std::size_t pending_ = 0;
};

}  // namespace relsim::tools
