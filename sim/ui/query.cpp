// The workbench's query strings (query.hpp). Every byte of a target comes
// from the network, so parsing is strict and names what it refuses; the
// allow-lists below are the whole of what the page may ask a command for:
// no option that reads or writes a file, no --threads, and none of the
// fixed options (--json, ...) that shape the answer the server relies on.
// Each endpoint also bounds its work where the command line would not (a
// browser tab should not start a 10^12-task simulation).
#include "relsim/ui/query.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/parse.hpp"

namespace relsim::ui {
namespace {

constexpr std::size_t kMaxKeyBytes = 32;
constexpr std::size_t kMaxShownBytes = 64;  // of a client's text quoted in a message

// A client's text for a one-line message: printable ASCII as is, any other
// byte as \xHH, cut after kMaxShownBytes.
std::string shown(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < kMaxShownBytes; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
    else out += fmt::format("\\x{:02x}", c);
  }
  if (text.size() > kMaxShownBytes) out += "...";
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

// Percent-decodes one part of the target (the path, a key or a value);
// `plus_is_space` in the query (application/x-www-form-urlencoded).
std::string decode(std::string_view part, bool plus_is_space, std::string_view what) {
  std::string out;
  out.reserve(part.size());
  for (std::size_t i = 0; i < part.size(); ++i) {
    char c = part[i];
    if (c == '%') {
      const int hi = i + 1 < part.size() ? hex_digit(part[i + 1]) : -1;
      const int lo = i + 2 < part.size() ? hex_digit(part[i + 2]) : -1;
      if (hi < 0 || lo < 0)
        throw InputError(fmt::format("{} '{}' has a bad percent escape at byte {}: '%' must be followed by two hex digits",
                                     what, shown(part), i));
      c = static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      c = ' ';
    }
    if (is_control(static_cast<unsigned char>(c)))
      throw InputError(fmt::format("{} '{}' decodes to the control byte 0x{:02x}: no byte below 0x20 nor 0x7f is allowed",
                                   what, shown(part), static_cast<unsigned char>(c)));
    out += c;
  }
  return out;
}

bool valid_key(std::string_view key) {
  if (key.empty() || key.size() > kMaxKeyBytes) return false;
  const auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!alpha(key[0])) return false;
  return std::all_of(key.begin() + 1, key.end(), [&](char c) { return alpha(c) || digit(c) || c == '-'; });
}

std::pair<std::string, std::string> parse_param(std::string_view item) {
  const std::size_t eq = item.find('=');
  std::string key = decode(item.substr(0, eq), true, "parameter name");
  std::string value = eq == std::string_view::npos ? std::string() : decode(item.substr(eq + 1), true, "parameter value");
  if (key.empty())
    throw InputError(fmt::format("parameter '{}' has an empty name: a name must be [A-Za-z][A-Za-z0-9-]{{0,31}}",
                                 shown(item)));
  if (!valid_key(key))
    throw InputError(fmt::format("parameter name '{}' is not valid: a name must be [A-Za-z][A-Za-z0-9-]{{0,31}}",
                                 shown(key)));
  return {std::move(key), std::move(value)};
}

}  // namespace

Target parse_target(std::string_view target) {
  if (target.size() > kMaxTargetBytes)
    throw InputError(fmt::format("the request target is {} bytes long: at most {} are allowed", target.size(),
                                 kMaxTargetBytes));
  for (std::size_t i = 0; i < target.size(); ++i) {
    const auto c = static_cast<unsigned char>(target[i]);
    if (c <= 0x20 || c >= 0x7f)
      throw InputError(fmt::format("the request target has the byte 0x{:02x} at {}: only printable ASCII (0x21 to 0x7e) "
                                   "is allowed, others percent-encoded",
                                   c, i));
  }
  if (target.empty() || target[0] != '/')
    throw InputError(fmt::format("the request target '{}' does not start with '/': give a path such as /api/exact",
                                 shown(target)));
  const std::size_t question = target.find('?');
  Target out;
  out.path = decode(target.substr(0, question), false, "path");
  if (question == std::string_view::npos) return out;
  const std::string_view query = target.substr(question + 1);
  if (query.empty()) return out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t amp = std::min(query.find('&', start), query.size());
    if (out.params.size() == kMaxParameters)
      throw InputError(fmt::format("the query has more than {} parameters", kMaxParameters));
    auto param = parse_param(query.substr(start, amp - start));
    for (const auto& [key, value] : out.params)
      if (key == param.first)
        throw InputError(fmt::format("parameter '{}' is given twice: give each parameter at most once", key));
    out.params.push_back(std::move(param));
    if (amp == query.size()) break;
    start = amp + 1;
  }
  return out;
}

// --- endpoints ----------------------------------------------------------------

namespace {

// Work bounds the command line does not have (the value must also be a
// plain decimal integer, so nothing like 1e9 or 0x... slips past).
struct Bound {
  std::string_view key;
  std::int64_t low, high;
};

struct Endpoint {
  std::string_view name;                // as in /api/NAME, and the command's name
  std::vector<std::string_view> takes;  // in the contract's order
  std::vector<std::string_view> flags;  // those of `takes` that take no value
  std::vector<std::string_view> fixed;  // appended to every command line
  std::vector<std::string_view> needs;  // parameters that must be given
  std::vector<Bound> bounds;
  std::vector<std::string_view> command = {};  // the command's words, if not just the name
};

using Words = std::vector<std::string_view>;

Words cat(std::initializer_list<Words> parts) {
  Words out;
  for (const Words& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

const std::vector<Endpoint>& endpoints() {
  static const std::vector<Endpoint> table = [] {
    const Words model = {"p", "q", "r", "n", "b", "g", "chain", "policy", "s", "B", "kinds"};
    const Words time = {"t-good", "t-bad", "request-seconds", "fault-seconds", "think-seconds", "backoff",
                        "retry-after"};
    const Words oracle = {"fault", "times", "tasks", "policy", "n", "r", "s", "B", "connect-timeout",
                          "header-timeout", "idle-timeout", "call-timeout", "task-timeout", "backoff-base",
                          "backoff-cap", "time-scale"};
    const Words sweep = {"p", "q", "r", "n", "b", "g", "chain", "policy", "s", "B", "kinds", "tasks", "seed",
                         "lanes", "interval", "confidence", "strict", "t-good", "t-bad", "request-seconds",
                         "think-seconds", "backoff", "retry-after", "fault-seconds"};
    const Words audit = {"policy", "s", "r", "B", "n", "infer", "no-wait-check", "wait-tolerance", "backoff-base",
                         "backoff-cap", "time-scale"};
    const Words run = {"tasks", "seed", "lanes", "interval", "confidence"};
    return std::vector<Endpoint>{
        {"exact", cat({model, {"method", "distribution-work"}, time}), {}, {"--json"}, {}, {}},
        {"simulate", cat({model, time, run}), {}, {"--json"}, {}, {{"tasks", 1, 10'000'000}}},
        {"oracle", oracle, {}, {"--json", "--per-task"}, {"fault"}, {{"tasks", 1, 100'000}}},
        {"live", cat({oracle, {"seed"}}), {}, {"--json", "--timeline"}, {"fault"}, {{"tasks", 1, 20}}},
        {"sweep", sweep, {"strict"}, {}, {}, {{"tasks", 0, 1'000'000}}},
        {"audit", audit, {"infer", "no-wait-check"}, {"--json", "--per-task"}, {}, {}},
        {"fit", {"format", "sdk-retries"}, {}, {"--json"}, {}, {}},
        {"tune",
         {"target", "n", "chain", "kinds", "t-good", "t-bad", "request-seconds", "fault-seconds", "think-seconds",
          "retry-after", "objective", "policies", "s-max", "r-max", "budgets", "sdk", "no-widen", "seed", "p99-tasks"},
         {"sdk", "no-widen"},
         {"--json"},
         {"target", "n", "t-good", "t-bad"},
         {{"p99-tasks", 0, 20'000}, {"s-max", 0, 100}, {"r-max", 0, 100}}},
        {"fleet",
         {"agents", "tenants", "tasks-per-agent", "start", "duration", "quota", "capacity", "queue", "pool", "throttle",
          "request-seconds", "backoff", "p", "q", "burst-mean", "r", "n", "policy", "s", "B", "kinds", "seed"},
         {},
         {"--json", "--series"},
         {},
         {{"agents", 1, 20'000}, {"tasks-per-agent", 1, 100}}},
        {"contention/trend", {}, {}, {"--json"}, {}, {}, {"contention", "trend"}},
        {"plan",
         {"p", "q", "burst-mean", "r", "n", "b", "g", "chain", "policy", "s", "B", "kinds", "tasks", "seed", "lanes",
          "max-requests"},
         {},
         {},
         {},
         // At most 20,000 x 10 x 25 = 5 x 10^6 draws, whatever the policy.
         {{"tasks", 1, 20'000}, {"n", 1, 10}, {"r", 0, 4}, {"s", 0, 4}, {"max-requests", 1, 25}}},
        {"oracle/plan", {"policy", "n", "r", "s", "B"}, {}, {"--json", "--per-task"}, {}, {}, {"oracle"}},
    };
  }();
  return table;
}

bool contains(const std::vector<std::string_view>& list, std::string_view word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

std::string listed(const std::vector<std::string_view>& words) {
  std::string out;
  for (const auto w : words) out += (out.empty() ? "" : ", ") + std::string(w);
  return out;
}

void check_bound(const Endpoint& e, const Bound& b, std::string_view value) {
  const bool digits = !value.empty() && value.size() <= 18 &&
                      std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
  const std::optional<std::int64_t> v = digits ? parse_number<std::int64_t>(value) : std::nullopt;
  if (!v || *v < b.low || *v > b.high)
    throw InputError(fmt::format("{} = '{}' is out of range for /api/{}: it must be a whole number in [{}, {}]", b.key,
                                 shown(value), e.name, b.low, b.high));
}

}  // namespace

std::vector<std::string> command_args(std::string_view endpoint,
                                      const std::vector<std::pair<std::string, std::string>>& params) {
  const auto& table = endpoints();
  const auto it = std::find_if(table.begin(), table.end(), [&](const Endpoint& e) { return e.name == endpoint; });
  if (it == table.end()) {
    std::vector<std::string_view> names;
    for (const Endpoint& e : table) names.push_back(e.name);
    throw InputError(fmt::format("unknown endpoint '{}': the endpoints are {}", shown(endpoint), listed(names)));
  }
  const Endpoint& e = *it;
  std::vector<std::string> args;
  if (e.command.empty()) args.emplace_back(e.name);
  for (const auto word : e.command) args.emplace_back(word);
  for (const auto& [key, value] : params) {
    if (!contains(e.takes, key))
      throw InputError(fmt::format("unknown parameter '{}' for /api/{}: it takes {}", shown(key), e.name,
                                   listed(e.takes)));
    if (contains(e.flags, key)) {
      if (value != "" && value != "1" && value != "true")
        throw InputError(fmt::format("parameter '{}' of /api/{} is a flag: its value must be empty, 1 or true, not '{}'",
                                     key, e.name, shown(value)));
      args.push_back("--" + key);
      continue;
    }
    if (value.empty())
      throw InputError(fmt::format("parameter '{}' of /api/{} needs a value, as in {}=VALUE", key, e.name, key));
    for (const Bound& b : e.bounds)
      if (b.key == key) check_bound(e, b, value);
    args.push_back("--" + key + "=" + value);
  }
  for (const auto need : e.needs) {
    const bool given = std::any_of(params.begin(), params.end(), [&](const auto& p) { return p.first == need; });
    if (!given) throw InputError(fmt::format("/api/{} needs the parameter '{}': give {}=VALUE", e.name, need, need));
  }
  for (const auto fixed : e.fixed) args.emplace_back(fixed);
  return args;
}

}  // namespace relsim::ui
