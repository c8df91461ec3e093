#pragma once
// The seconds recorded requests took (docs/time.md, "Durations from
// recordings"), for time mode's --request-seconds-from DIR: each exchange of
// relsim proxy --record that a replay keeps (replayable()) and whose
// upstream answered 2xx and was read to its end; its duration is end_ms,
// from the request forwarded to the answer's last byte: the time to the
// first event (or to a whole answer's body) and the stream's length after it.
#include <cstdint>
#include <string>
#include <vector>

namespace relsim {

struct RecordedSeconds {
  std::vector<double> seconds;        // each kept request's, in file and line order
  std::vector<double> first_seconds;  // to its first event, or to a whole answer's body
  std::int64_t skipped = 0;           // exchanges not kept: broken by a fault, cut short, lossy, not a whole 2xx
};

// Throws InputError naming the directory when it holds no recording (or one
// the reader refuses, with its file and line), or none that can be kept.
RecordedSeconds read_recorded_seconds(const std::string& dir);

}  // namespace relsim
