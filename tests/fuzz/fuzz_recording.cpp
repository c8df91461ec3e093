// libFuzzer target: the recording reader (formats/recording.hpp,
// parse_recordings) on arbitrary text. InputError is its answer to bad
// input; anything else escaping, a crash or a sanitizer report is a bug.
// Every exchange it accepts must write a line that reads back, without an
// error, to the same line.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "relsim/core/error.hpp"
#include "relsim/formats/recording.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<relsim::RecordedExchange> read;
  try {
    read = relsim::parse_recordings(text, "fuzz.jsonl");
  } catch (const relsim::InputError&) {
    return 0;
  }
  for (const relsim::RecordedExchange& x : read) {
    const std::string line = x.line();
    try {
      if (relsim::RecordedExchange::from_line(line, "fuzz.jsonl (rewritten)").line() != line) std::abort();
    } catch (const relsim::InputError&) {
      std::abort();  // a line the writer wrote must read
    }
  }
  return 0;
}
