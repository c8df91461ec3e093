#pragma once
// relsim serve --replay DIR (docs/replay.md): the recordings a replay answers
// from, and which one answers a request. A request matches a recording of
// its dialect and API path whose request body is the same JSON in the
// fields compared: by default every top-level field but the volatile ones
// (kVolatileFields), or just the fields `--match` names. Key order and
// spacing do not count; values do, exactly (16 and 16.0 differ). Among
// several recordings that match, a whole 2xx answer before an error or a
// broken one, then the one of the request's own task and index, else the
// first of its task, else the first of all (in file and line order), so a
// replay is the same whatever order the requests come in.
//
// Only exchanges the proxy passed on untouched and read as far as the
// upstream sent them are kept (replayable()): one a fault of the plan broke
// (entry not "ok") was read only as far as the fault let the proxy read, or
// held, and one whose client went away was not read to its end (complete
// false, no error), so its answer or its timing is not the upstream's.
// Lines marked lossy (bytes that were not UTF-8) are not kept either: they
// cannot be sent as they came. Each is counted (skipped()).
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

// Whether a replay keeps the exchange (above).
bool replayable(const RecordedExchange& x);
// A 2xx answer read to its end: what a request answered ok expects.
bool whole_2xx(const RecordedExchange& x);

class RecordingBook {
 public:
  // `match`: the top-level request-body fields compared ([A-Za-z0-9_]{1,64}
  // each); empty: every field but kVolatileFields. Throws InputError for a
  // --match name that is not a field name, for one that no kept recording's
  // body has, and when recordings were given but none can be kept.
  RecordingBook(std::vector<RecordedExchange> recordings, std::vector<std::string> match);

  struct Skipped {
    std::size_t broken = 0;       // a fault of the plan broke the answer on its way (entry not ok)
    std::size_t client_gone = 0;  // the proxy stopped reading when its client went away
    std::size_t lossy = 0;        // bytes that were not UTF-8 were replaced
    std::size_t total() const { return broken + client_gone + lossy; }
  };
  const Skipped& skipped() const { return skipped_; }

  struct Found {
    std::vector<std::shared_ptr<const RecordedExchange>> matches;  // in file and line order; empty: none
    std::string why;  // when none: the nearest recording and the fields that differ
    // The match that answers request `index` of `task` (matches not empty).
    std::shared_ptr<const RecordedExchange> pick(std::int64_t task, std::int64_t index) const;
  };
  // `path`: the API's own path (/v1/messages), a query ignored; `body` the
  // request's body as sent.
  Found find(Dialect dialect, std::string_view path, std::string_view body) const;
  // A recording made on a miss (record-on-miss): later requests match it
  // when it is kept (as above) and a whole 2xx answer; an error or a broken
  // answer is not kept, so the same request is forwarded again next time.
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
  // Why no recording answers: the nearest of `candidates` and the fields that differ.
  std::string nearest(const std::vector<std::shared_ptr<const RecordedExchange>>& candidates, std::size_t held,
                      Dialect dialect, std::string_view path, std::string_view body) const;

  std::vector<std::string> match_;
  Skipped skipped_;
  mutable std::mutex mu_;
  std::vector<Entry> all_;                                        // in file and line order
  std::unordered_map<std::string, std::vector<std::size_t>> by_key_;  // key -> indices into all_
};

}  // namespace relsim
