#pragma once
// relsim serve --replay DIR (docs/replay.md): the recordings a replay answers
// from, and which one answers a request. A request matches a recording of
// its dialect and API path whose request body is the same JSON in the
// fields compared: by default every top-level field but the volatile ones
// (kVolatileFields), or just the fields `--match` names. Key order and
// spacing do not count; values do, exactly. Among several recordings that
// match, the one of the request's own task and index answers, else the
// first of its task, else the first of all (in file and line order), so a
// replay is the same whatever order the requests come in.
//
// Thread-safe: a replay with --upstream adds what it records on a miss
// while other requests look up.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "relsim/core/dialect.hpp"
#include "relsim/formats/recording.hpp"

namespace relsim {

// The request-body fields the default match leaves out: they change from
// run to run (metadata.user_id, a per-user id) or ask only how the answer
// is framed (stream_options), not what it says.
inline constexpr std::string_view kVolatileFields[] = {"metadata", "stream_options", "user"};

class RecordingBook {
 public:
  // `match`: the top-level request-body fields compared ([A-Za-z0-9_]{1,64}
  // each); empty: every field but kVolatileFields. Throws InputError for a
  // lossy recording (its bytes were not all UTF-8: not replayable as sent),
  // for a --match name that is not a field name, or for one that no
  // recording's body has (when there are recordings).
  RecordingBook(std::vector<RecordedExchange> recordings, std::vector<std::string> match);

  struct Found {
    std::vector<std::shared_ptr<const RecordedExchange>> matches;  // in file and line order; empty: none
    std::string why;  // when none: the nearest recording and the fields that differ
    // The match that answers request `index` of `task` (matches not empty).
    std::shared_ptr<const RecordedExchange> pick(std::int64_t task, std::int64_t index) const;
  };
  // `path`: the API's own path (/v1/messages), a query ignored; `body` the
  // request's body as sent.
  Found find(Dialect dialect, std::string_view path, std::string_view body) const;
  // A recording made on a miss (record-on-miss): later requests match it.
  void add(RecordedExchange exchange);
  std::size_t size() const;
  const std::vector<std::string>& match() const { return match_; }

 private:
  struct Entry {
    std::shared_ptr<const RecordedExchange> exchange;
    std::string key;
  };
  // The key of a request: dialect, path, and the compared fields as canonical JSON.
  std::string key_of(Dialect dialect, std::string_view path, std::string_view body) const;
  void add_locked(std::shared_ptr<const RecordedExchange> exchange);
  std::string nearest_locked(Dialect dialect, std::string_view path, std::string_view body) const;

  std::vector<std::string> match_;
  mutable std::mutex mu_;
  std::vector<Entry> all_;                                        // in file and line order
  std::unordered_map<std::string, std::vector<std::size_t>> by_key_;  // key -> indices into all_
};

}  // namespace relsim
