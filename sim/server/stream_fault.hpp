#pragma once
// Internal to the server: relsim proxy breaking a real event stream as an
// in-stream fault kind says (docs/proxy.md), event by event, the events'
// bytes otherwise untouched:
//   cut         the events up to and including the first content_block_delta,
//               then the connection closed with no terminating chunk
//   no_stop     every event but message_stop
//   malformed   a content_block_delta whose JSON breaks off, before the first delta
//   overloaded  message_start, then an `event: error` overloaded_error, then the end
//   stall       message_start and content_block_start, then a hold until the
//               task is released, then the rest
// With no kind (an `ok` entry) every byte passes as it arrives. In the
// OpenAI dialect (data-only chat.completion.chunk events, docs/wire.md):
//   cut         the chunks up to and including the first with content,
//               then the connection closed with no terminating chunk
//   no_stop     every chunk but those with a finish_reason
//   malformed   a chunk whose JSON breaks off, before the first with content
//   overloaded  the first chunk, then an error object as a chunk, then the end
//   stall       the first chunk, then a hold until released, then the rest
// The content faults and stall_first, in both dialects (formats/answer_faults.hpp):
//   max_tokens       the events up to the first content, none after it,
//                    and the stop reason max_tokens (finish_reason length)
//   bad_tool_args    before the stop, a tool call whose arguments are
//                    {"city": Paris}; the stop reason tool_use (tool_calls)
//   duplicate_event  the first content event (chunk) twice
//   stall_first      a hold before the first event, then the rest
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "relsim/core/dialect.hpp"
#include "relsim/core/http_text.hpp"
#include "relsim/core/faults.hpp"

namespace relsim::mock {

class StreamFault {
 public:
  explicit StreamFault(std::optional<FaultKind> kind, Dialect dialect = Dialect::anthropic)
      : kind_(kind), dialect_(dialect) {}

  // What to send, then what to do: go on reading, hold (stall), close
  // without the terminating chunk (cut), or end the reply cleanly (overloaded).
  enum class Then { go_on, hold, cut, end };
  struct Step {
    std::string bytes;
    Then then = Then::go_on;
  };
  // Bytes as they came from the upstream.
  std::vector<Step> feed(std::string_view bytes);
  // The upstream's stream ended: what is left (an incomplete last event as it came).
  std::vector<Step> finish();
  // Nothing more goes to the client (a cut or an end was given).
  bool done() const { return done_; }

 private:
  std::vector<Step> on_event(std::string event);
  void on_content_event(std::string event, bool content, std::size_t index, std::vector<Step>& out);

  std::optional<FaultKind> kind_;
  Dialect dialect_;
  std::string pending_;  // an event not yet complete
  std::size_t events_ = 0;
  bool acted_ = false;
  bool done_ = false;
  std::size_t next_block_ = 0;  // bad_tool_args: past the highest block (tool call) index seen
};

// The event's name and its data (http_text.hpp).
using http_text::sse_data;
using http_text::sse_event_name;

}  // namespace relsim::mock
