// Where the mock breaks each in-stream fault, read from its bytes, against
// core/dialect.hpp's stream_break_share, which the fleet simulation uses to
// end a bad stream (docs/fleet.md, The provider): for each kind and dialect,
// the event chunks the server writes before a client can see the fault (an
// error event, data that is not JSON, the connection closed without the
// terminating chunk, or the end of a stream that never said it was done),
// over the healthy stream's events. Each chunk is paced by its own delay, so
// that share of the chunks is that share of the stream's time.
#include <gtest/gtest.h>

#include <array>
#include <string>

#include <fmt/format.h>

#include "relsim/core/dialect.hpp"
#include "server_wire.hpp"

namespace stream_break_test {

using namespace relsim::test::server_wire;
using relsim::Dialect;
using relsim::FaultKind;

const std::string kChatBody = R"({"model":"relsim-mock","stream":true,"messages":[{"role":"user","content":"hi"}]})";

// The event chunks a client has read when it can tell the stream is broken.
std::size_t chunks_to_the_break(const Response& r) {
  for (std::size_t i = 0; i < r.chunks.size(); ++i) {
    const std::string& c = r.chunks[i];
    if (c.find("event: error") != std::string::npos || c.find("\"error\"") != std::string::npos) return i + 1;
    const auto data = c.find("data: ");
    if (data == std::string::npos) continue;
    std::string payload = c.substr(data + 6);
    while (!payload.empty() && (payload.back() == '\n' || payload.back() == '\r')) payload.pop_back();
    if (payload != "[DONE]" && Json::parse(payload, nullptr, false).is_discarded()) return i + 1;
  }
  return r.chunks.size();  // closed early (cut), or ended without its stop (no_stop)
}

TEST(StreamBreak, TheFleetEndsABadStreamWhereTheMockBreaksIt) {
  Server server(config_with());
  for (const Dialect dialect : {Dialect::anthropic, Dialect::openai}) {
    const std::array<double, relsim::kFaultKinds> share = relsim::stream_break_share(dialect);
    const double events = relsim::healthy_stream_events(dialect);
    std::int64_t task = dialect == Dialect::openai ? 100 : 0;
    for (const FaultKind kind : {FaultKind::cut, FaultKind::malformed, FaultKind::overloaded, FaultKind::no_stop}) {
      SCOPED_TRACE(fmt::format("{} {}", relsim::dialect_name(dialect), relsim::to_string(kind)));
      server.set_script(task, {relsim::ScriptEntry::of(kind)});
      const std::string bytes =
          dialect == Dialect::openai
              ? request("POST", fmt::format("/t/{}/v1/chat/completions", task), kChatBody)
              : message(task);
      const Response r = one_request(server.port(), bytes);
      ASSERT_EQ(r.status, 200);
      EXPECT_DOUBLE_EQ(static_cast<double>(chunks_to_the_break(r)) / events, share[static_cast<std::size_t>(kind)]);
      ++task;
    }
  }
}

}  // namespace stream_break_test
