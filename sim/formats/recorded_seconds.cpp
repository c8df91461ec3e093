#include "relsim/formats/recorded_seconds.hpp"

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/formats/recording.hpp"
#include "relsim/formats/recording_book.hpp"

namespace relsim {

RecordedSeconds read_recorded_seconds(const std::string& dir) {
  RecordedSeconds out;
  for (const RecordedExchange& x : read_recordings(dir)) {
    if (!replayable(x) || !whole_2xx(x)) {
      ++out.skipped;
      continue;
    }
    out.seconds.push_back(x.end_ms() / 1000.0);
    out.first_seconds.push_back((x.events().empty() ? x.end_ms() : x.events().front().first) / 1000.0);
  }
  if (out.seconds.empty())
    throw InputError(fmt::format("request-seconds-from {}: none of its {} recorded exchanges is a whole 2xx answer "
                                 "passed on untouched, so none gives a request's seconds; record a clean run "
                                 "(relsim proxy --p 0 --record DIR)",
                                 dir, out.skipped));
  return out;
}

}  // namespace relsim
