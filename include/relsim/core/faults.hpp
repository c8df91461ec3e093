#pragma once
// The fault-kind catalogue (docs/model.md, Fault kinds): what a bad request looks like,
// and at which stage of a request it strikes.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace relsim {

// Appended kinds go last, so that the draws of existing weights (kind_cuts)
// and every seeded result stay the same.
enum class FaultKind : std::uint8_t {
  cut, no_stop, malformed, overloaded, stall,                       // in-stream
  slow_headers, http_429, http_500, http_503, http_529, reset,      // pre-response
  http_400,                                                         // fatal
  max_tokens, bad_tool_args, duplicate_event,                       // content
  stall_first,                                                      // in-stream
};
inline constexpr int kFaultKinds = 16;

// in_stream: the stream breaks or stops after its 200 and headers;
// pre_response: no 200; fatal: the caller's bug (400); content: a clean,
// whole 200 stream whose answer is wrong (cut at the token limit, tool
// arguments that are not JSON, an event sent twice), which only a client
// that checks the answer catches (docs/model.md, Fault kinds).
enum class Stage { in_stream, pre_response, fatal, content };

std::string_view to_string(FaultKind kind);
Stage stage_of(FaultKind kind);
// Throws InputError naming the word and listing the kinds.
FaultKind parse_fault_kind(std::string_view word);

// Whether a request of this kind streams its answer, in part or whole
// (in_stream and content): what billing charges output tokens for.
bool streams_answer(FaultKind kind);

// Relative weights of the kinds a bad request takes. Default: uniform over
// the five in-stream kinds cut .. stall (docs/model.md, Reference
// experiment); stall_first, also in-stream, is not among them.
struct FaultWeights {
  std::array<double, kFaultKinds> weight{};
  static FaultWeights in_stream_uniform();
  double total() const;
  // The total, after checking that every weight is finite and >= 0 and the
  // total finite and > 0; throws InputError naming the bad value otherwise.
  double checked_total() const;
};

// Parses "cut=1,stall=1,slow_headers=2": every kind named at most once, each
// weight a finite number >= 0, total > 0. Throws InputError otherwise.
FaultWeights parse_fault_weights(std::string_view spec);
std::string to_string(const FaultWeights& weights);
// The fault kinds a run draws (weight > 0), in enum order: the kinds whose
// counts relsim simulate and relsim demo print.
std::vector<FaultKind> drawn_fault_kinds(const FaultWeights& weights);

// How a 32-bit word picks a bad request's kind (docs/methods.md): kind k when
// cut[k-1] <= word < cut[k] (cut[-1] = 0), cut[k] = round(2^32 * (w_0 + ...
// + w_k) / total), and 2^32 from the last kind of positive weight on, so a
// kind of weight 0 has an empty range and never appears. Shares are exact to
// 2^-33. Checks the weights (checked_total).
using KindCuts = std::array<std::uint64_t, kFaultKinds>;
KindCuts kind_cuts(const FaultWeights& weights);
inline FaultKind kind_of_word(const KindCuts& cut, std::uint32_t word) {
  int k = 0;
  while (word >= cut[static_cast<std::size_t>(k)]) ++k;
  return static_cast<FaultKind>(k);
}

}  // namespace relsim
