#pragma once
// The sufficient statistics of the fault chain (docs/fit.md, Counts), gathered
// record by record. Only each task's last two outcomes, its last order and
// its current run are kept, so memory grows with the number of tasks, never
// with the number of records: 10^7 requests stream through in a few seconds.
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "relsim/fit/records.hpp"

namespace relsim::fit {

// Counts indexed by run length (1, 2, ...): dense for the short runs every
// log has, a map for the rare long ones, so an all-bad log of 10^7 requests
// costs a few entries, not 10^7.
class RunHistogram {
 public:
  void add(std::int64_t length, std::int64_t count = 1);
  std::int64_t at(std::int64_t length) const;
  std::int64_t max_length() const;  // 0 when empty
  std::int64_t total() const;
  void merge(const RunHistogram& other);

 private:
  static constexpr std::int64_t kDense = 1024;
  std::vector<std::int64_t> dense_;
  std::map<std::int64_t, std::int64_t> sparse_;
};

// Outcomes are indexed 0 = good, 1 = bad.
struct ChainCounts {
  std::int64_t records = 0;
  std::int64_t tasks = 0;
  std::int64_t first[2] = {0, 0};             // each task's first request
  std::int64_t transitions[2][2] = {};        // [previous][next]
  std::int64_t triplets[2][2][2] = {};        // [before last][last][next], from each task's third request
  // Runs of one outcome (index as above). A run is *completed* when the
  // opposite outcome closes it within its task; *continued[k]* counts the
  // times a run of length k was followed by one more of the same outcome.
  // Together they give the runs at risk at each length, which the runs test
  // needs because tasks end (and cut runs short) whatever the chain does.
  RunHistogram completed[2];
  RunHistogram continued[2];
  std::map<std::string, std::int64_t> kinds;  // bad requests by kind ("unknown" when the log names none)

  std::int64_t bad() const { return first[1] + transitions[0][1] + transitions[1][1]; }
  std::int64_t good() const { return records - bad(); }
};

// Feeds ChainCounts. Records of different tasks may interleave; within a
// task they must come in non-decreasing `order`.
class ChainCounter {
 public:
  // Throws InputError "task 'T': timestamps out of order (O after P)" when a
  // task's order goes back. `source` names the input in that message.
  void add(const Record& record, const std::string& source = "");
  const ChainCounts& counts() const { return counts_; }

 private:
  struct TaskState {
    std::int64_t last_order = 0;
    std::int64_t run = 0;       // length of the current run of `last`
    std::int8_t last = -1;      // -1: no request yet
    std::int8_t before = -1;
  };
  ChainCounts counts_;
  std::unordered_map<std::string, TaskState> tasks_;
  // The previous record's task: logs usually list a task's requests together.
  const std::string* last_key_ = nullptr;
  TaskState* last_state_ = nullptr;
};

}  // namespace relsim::fit
