#pragma once
// Internal to the server: an answer that is not a stream (one JSON body: an
// OpenAI chat.completion, or a Messages API message through relsim proxy)
// broken as an in-stream fault kind says, the same way by the mock
// (openai_wire.cpp) and by relsim proxy (upstream.cpp); docs/wire.md and
// docs/proxy.md give the table:
//   cut         the head announces the whole body; its first half is sent,
//               then the connection closes
//   no_stop     the body with finish_reason (OpenAI's, in every choice) or
//               stop_reason (the Messages API's) null
//   malformed   the first half of the body as the whole body: not JSON
//   overloaded  the dialect's overloaded error as the whole 200 body
//   stall       the head, then a hold until the task is released, then the body
// The content faults rewrite the JSON body (a Messages API message, a
// chat.completion) and send it whole:
//   max_tokens       stop_reason max_tokens (finish_reason length in the
//                    first choice), and only the first half of the first text
//   bad_tool_args    a tool call added whose arguments are the string
//                    {"city": Paris}; stop_reason tool_use (tool_calls)
//   duplicate_event  the first content block twice (OpenAI: the message's
//                    content twice)
//   stall_first      as stall
// With no kind (ok) the body is the answer as it is.
#include <cstddef>
#include <optional>
#include <string>

#include "relsim/core/dialect.hpp"
#include "relsim/core/faults.hpp"

namespace relsim::wire {

// `body` is what is sent after the head, whose content-length is
// `content_length` (more than body.size() for a cut, which then closes:
// `clean_end` false); `hold_before_body`: a stall holds between the head
// and the body. `broken` is false when the kind could not be applied: a
// no_stop or a content fault on a body with nothing to rewrite (not such a
// JSON object, or nested deeper than kMaxWholeNesting), which then goes as
// it came.
struct WholeReply {
  std::string body;
  std::size_t content_length = 0;
  bool hold_before_body = false;
  bool clean_end = true;
  bool broken = true;
};

// The deepest nesting of a body no_stop rewrites (the JSON library writes
// nested values recursively; nested_deeper, json.hpp).
inline constexpr std::size_t kMaxWholeNesting = 64;

WholeReply break_whole(std::optional<FaultKind> kind, Dialect dialect, std::string body);

}  // namespace relsim::wire
