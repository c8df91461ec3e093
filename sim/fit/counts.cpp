// ChainCounter (include/relsim/fit/counts.hpp): one hash lookup per record,
// skipped when the record continues the previous one's task.
#include "relsim/fit/counts.hpp"

#include <fmt/format.h>

#include "relsim/core/error.hpp"

namespace relsim::fit {

void RunHistogram::add(std::int64_t length, std::int64_t count) {
  if (length < kDense) {
    if (static_cast<std::int64_t>(dense_.size()) <= length) dense_.resize(static_cast<std::size_t>(length) + 1, 0);
    dense_[static_cast<std::size_t>(length)] += count;
  } else {
    sparse_[length] += count;
  }
}

std::int64_t RunHistogram::at(std::int64_t length) const {
  if (length < kDense) return length < static_cast<std::int64_t>(dense_.size()) ? dense_[static_cast<std::size_t>(length)] : 0;
  const auto it = sparse_.find(length);
  return it == sparse_.end() ? 0 : it->second;
}

std::int64_t RunHistogram::max_length() const {
  if (!sparse_.empty()) return sparse_.rbegin()->first;
  for (std::size_t k = dense_.size(); k-- > 0;)
    if (dense_[k] != 0) return static_cast<std::int64_t>(k);
  return 0;
}

std::int64_t RunHistogram::total() const {
  std::int64_t sum = 0;
  for (const std::int64_t c : dense_) sum += c;
  for (const auto& [k, c] : sparse_) sum += c;
  return sum;
}

void RunHistogram::merge(const RunHistogram& other) {
  for (std::size_t k = 0; k < other.dense_.size(); ++k)
    if (other.dense_[k] != 0) add(static_cast<std::int64_t>(k), other.dense_[k]);
  for (const auto& [k, c] : other.sparse_) add(k, c);
}

void ChainCounter::add(const Record& record, const std::string& source) {
  TaskState* state = last_state_;
  if (state == nullptr || *last_key_ != record.task) {
    // unordered_map never moves its elements, so the pointers stay valid.
    const auto [it, fresh] = tasks_.try_emplace(record.task);
    if (fresh) ++counts_.tasks;
    state = &it->second;
    last_key_ = &it->first;
    last_state_ = state;
  }
  const int x = record.bad ? 1 : 0;
  if (state->last >= 0 && record.order < state->last_order)
    throw InputError(fmt::format("{}{}task '{}': timestamps out of order ({} after {})", source,
                                 source.empty() ? "" : ": ", record.task, record.order, state->last_order));
  ++counts_.records;
  if (x == 1) ++counts_.kinds[record.kind.empty() ? std::string("unknown") : record.kind];
  if (state->last < 0) {
    ++counts_.first[x];
    state->run = 1;
  } else {
    const int last = state->last;
    ++counts_.transitions[last][x];
    if (state->before >= 0) ++counts_.triplets[state->before][last][x];
    if (x == last) {
      counts_.continued[last].add(state->run);
      ++state->run;
    } else {
      counts_.completed[last].add(state->run);
      state->run = 1;
    }
  }
  state->before = state->last;
  state->last = static_cast<std::int8_t>(x);
  state->last_order = record.order;
}

}  // namespace relsim::fit
