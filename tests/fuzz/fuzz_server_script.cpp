// libFuzzer target: the server's script parser (server.hpp, parse_script and
// parse_script_entry), the body of POST /control/tasks/{task}/script, on
// arbitrary JSON text parsed as the server parses it. InputError is its
// answer to bad input; anything else escaping, a crash or a sanitizer report
// is a bug. An entry it accepts must come back unchanged through to_json.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "relsim/core/error.hpp"
#include "relsim/server/server.hpp"

namespace {

void check_round_trip(const relsim::ScriptEntry& e) {
  if (relsim::parse_script_entry(relsim::to_json(e)) != e) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const relsim::Json body = relsim::Json::parse(text, nullptr, false);
  if (body.is_discarded()) return 0;
  try {
    check_round_trip(relsim::parse_script_entry(body));
  } catch (const relsim::InputError&) {
  }
  const relsim::Json* responses = &body;
  if (body.is_object() && body.contains("responses")) responses = &body.at("responses");
  try {
    for (const auto& e : relsim::parse_script(*responses)) check_round_trip(e);
  } catch (const relsim::InputError&) {
  }
  return 0;
}
