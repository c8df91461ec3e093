// The shared result queues (result_queue.hpp): tickets, and deliveries in
// order or in a seeded random order.
#include "relsim/tools/result_queue.hpp"

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/fnv.hpp"
#include "relsim/core/rng.hpp"

namespace relsim::tools {
std::string_view to_string(QueueOrder order) { return order == QueueOrder::fifo ? "fifo" : "shuffled"; }

QueueOrder parse_queue_order(std::string_view word) {
  if (word == "fifo") return QueueOrder::fifo;
  if (word == "shuffled") return QueueOrder::shuffled;
  throw InputError(fmt::format("queue order = '{}' is not an order: use fifo or shuffled", word.substr(0, 100)));
}

std::uint64_t ResultQueues::submit(std::string_view queue, std::string input, std::string tenant, std::string agent) {
  if (pending_ >= kMaxQueued) return 0;
  auto it = queues_.find(queue);
  if (it == queues_.end()) it = queues_.emplace(std::string(queue), Queue{}).first;
  Queue& q = it->second;
  std::string result = fmt::format("result({})", input);
  q.pending.push_back({++q.tickets, std::move(input), std::move(result), std::move(tenant), std::move(agent)});
  ++pending_;
  return q.tickets;
}

QueuedResult ResultQueues::take(std::string_view queue, std::uint64_t& newest) {
  const auto it = queues_.find(queue);
  newest = it == queues_.end() ? 0 : it->second.tickets;
  if (it == queues_.end() || it->second.pending.empty()) return {};
  Queue& q = it->second;
  std::size_t pick = 0;
  if (order_ == QueueOrder::shuffled) {
    const double u = rng::uniform(seed_, rng::Stream::tool_queue, fnv1a64(queue), q.takes);
    pick = std::min(q.pending.size() - 1, static_cast<std::size_t>(u * static_cast<double>(q.pending.size())));
  }
  ++q.takes;
  QueuedResult out = std::move(q.pending[pick]);
  q.pending.erase(q.pending.begin() + static_cast<std::ptrdiff_t>(pick));
  --pending_;
  return out;
}

}  // namespace relsim::tools
