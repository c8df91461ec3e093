#pragma once
// The content faults of an API answer (docs/model.md, Content faults;
// docs/wire.md gives the bytes), in both dialects: a stop reason rewritten,
// a tool call whose arguments do not parse as JSON, the events that carry
// it, and a whole answer (a Messages API message, a chat.completion)
// rewritten as each content fault says. relsim's mock and proxy put them
// into streams and answers (server/stream_fault, server/whole_fault).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "relsim/core/dialect.hpp"
#include "relsim/core/faults.hpp"

namespace relsim::answer_faults {

// The tool call the bad_tool_args fault adds: its name, and its arguments
// in the two pieces they are streamed in, which join to {"city": Paris}.
inline constexpr std::string_view kToolName = "lookup";
inline constexpr std::string_view kArgsHead = R"({"city": )";
inline constexpr std::string_view kArgsTail = "Paris}";

// The event with its stop reason replaced: the `delta.stop_reason` of an
// Anthropic message_delta (`anthropic`), the finish_reason of an OpenAI
// chunk's first choice (`openai`). An event whose data is not the JSON
// object that names one comes back as it was.
std::string with_stop(std::string_view event, Dialect dialect, std::string_view anthropic, std::string_view openai);

// The first index free after `event`: past an Anthropic content_block_start's
// block, past the highest tool call an OpenAI chunk's delta carries; nullopt
// for any other event.
std::optional<std::size_t> index_after(std::string_view event, Dialect dialect);

// The events of the bad tool call. Anthropic: content_block_start of a
// tool_use block at block `index`, two input_json_delta events,
// content_block_stop. OpenAI: two chunks whose tool_calls deltas carry tool
// call `index`, modelled on `finish_chunk` (its id, created and model kept,
// its choice's delta replaced).
std::vector<std::string> bad_tool_call(Dialect dialect, std::size_t index, std::string_view finish_chunk);

// A whole answer's JSON body as `kind` (max_tokens, bad_tool_args,
// duplicate_event) says: docs/wire.md, Each reply on the wire. nullopt when
// the body is not such an answer (or nests deeper than `max_nesting`).
std::optional<std::string> with_content_fault(const std::string& body, Dialect dialect, FaultKind kind,
                                              std::size_t max_nesting);

}  // namespace relsim::answer_faults
