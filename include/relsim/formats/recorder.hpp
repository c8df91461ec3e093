#pragma once
// Writing the recordings of relsim proxy --record DIR (docs/replay.md; the
// format: recording.hpp). Every messages exchange the proxy forwards
// (either dialect) becomes one JSON line of a file in DIR: the request as the client sent it, less its
// credentials (x-api-key, authorization, and the headers --redact names,
// which are left out, not masked), and the upstream's answer as it came,
// before any fault broke it: status, headers, and for an event stream each
// event with the time its last byte arrived, in ms since the hop began.
// Lines are written whole under a mutex and flushed, so a killed proxy
// leaves every finished exchange on disk.
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "relsim/formats/recording.hpp"

namespace relsim {

class Recorder {
 public:
  // Creates DIR (and its parents) when missing, and a new file in it named
  // by the start time and process; throws InputError naming DIR when it
  // cannot. `redact`: more header names to leave out (any case).
  Recorder(const std::string& dir, const std::vector<std::string>& redact);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Whether a request header (lower-case name) stays out of the recording.
  bool left_out(std::string_view name) const;
  void write(const RecordedExchange& exchange);
  const std::string& path() const { return path_; }
  std::uint64_t written() const;

 private:
  std::vector<std::string> redact_;
  std::string path_;
  mutable std::mutex mu_;
  std::FILE* file_ = nullptr;
  std::uint64_t written_ = 0;
  bool failed_ = false;  // a write failed: said once on stderr
};

}  // namespace relsim
