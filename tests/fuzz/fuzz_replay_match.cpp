// libFuzzer target: a replay's matching (formats/recording_book.hpp) on
// arbitrary recordings and request bodies. The input is recording lines,
// then a NUL byte, then request bodies split at each further NUL. Bad
// recordings and --match names are refused with InputError; anything else
// escaping, a crash or a sanitizer report is a bug. Every recording the
// book keeps must match its own request, among the matches of its key,
// and so must the same body written again with other spacing; a body no
// recording matches must say why.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "relsim/core/error.hpp"
#include "relsim/core/json.hpp"
#include "relsim/formats/recording_book.hpp"

namespace {

void must(bool ok) {
  if (!ok) std::abort();
}

void check(const relsim::RecordingBook& book, const std::vector<relsim::RecordedExchange>& held,
           const std::vector<std::string_view>& bodies) {
  for (const relsim::RecordedExchange& x : held) {
    if (!relsim::replayable(x)) continue;  // not kept
    const relsim::RecordingBook::Found f = book.find(x.dialect, x.path, x.request_body);
    must(!f.matches.empty());
    bool self = false;
    for (const auto& m : f.matches) self = self || (m->source == x.source && m->task == x.task && m->index == x.index);
    must(self);
    must(f.pick(x.task, x.index)->task == x.task);
    // The same object with other spacing (and, for a sorted map, key order) matches the same recordings.
    const relsim::Json body = relsim::Json::parse(x.request_body, nullptr, false);
    if (body.is_object() && !relsim::nested_deeper(body, 32)) {
      const relsim::RecordingBook::Found again = book.find(x.dialect, x.path, nlohmann::json::parse(x.request_body).dump(1));
      must(again.matches.size() == f.matches.size());
    }
  }
  for (const std::string_view body : bodies)
    for (const relsim::Dialect d : {relsim::Dialect::anthropic, relsim::Dialect::openai}) {
      const relsim::RecordingBook::Found f = book.find(d, d == relsim::Dialect::openai ? "/v1/chat/completions" : "/v1/messages", body);
      must(!f.matches.empty() || !f.why.empty());
      if (!f.matches.empty()) must(f.pick(0, 0) != nullptr);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const std::size_t cut = std::min(all.find('\0'), all.size());
  std::vector<std::string_view> bodies;
  for (std::size_t from = cut + 1; from <= all.size() && cut < all.size();) {
    const std::size_t end = std::min(all.find('\0', from), all.size());
    bodies.push_back(all.substr(from, end - from));
    from = end + 1;
  }
  std::vector<relsim::RecordedExchange> held;
  try {
    held = relsim::parse_recordings(all.substr(0, cut), "fuzz.jsonl");
  } catch (const relsim::InputError&) {
    return 0;
  }
  const bool any_kept = std::any_of(held.begin(), held.end(),
                                    [](const relsim::RecordedExchange& x) { return relsim::replayable(x); });
  // The default match, then --match model.
  for (const bool by_field : {false, true}) {
    std::vector<std::string> match;
    if (by_field) match = {"model"};
    try {
      const relsim::RecordingBook book(held, match);
      check(book, held, bodies);
    } catch (const relsim::InputError&) {
      // Refused only when nothing can be kept, or for a --match no kept recording has.
      must((!held.empty() && !any_kept) || by_field);
    }
  }
  return 0;
}
