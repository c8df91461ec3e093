// libFuzzer target: the workbench's query strings (relsim/ui/query.hpp), the
// first thing the UI server does with a client's target. The input is a
// request target for parse_target, whose parameters then go to command_args
// for every endpoint; or, when the first byte is 0, raw (key, value) pairs
// split at NUL bytes straight to command_args, so that it also meets names
// and values parse_target would never let through.
//
// InputError is the answer to bad input, and its message must be one line
// of printable text; anything else escaping, a crash or a sanitizer report is
// a bug, and so is an accepted target or command line that breaks the
// header's promises: a path starting with '/', names [A-Za-z][A-Za-z0-9-]{0,31}
// given once, at most kMaxParameters, no control byte decoded; the command
// first, then one --name or --name=value per parameter, in order, then the
// endpoint's fixed options.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "relsim/core/error.hpp"
#include "relsim/ui/query.hpp"

namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

constexpr const char* kEndpoints[] = {"exact", "simulate", "oracle", "live", "sweep", "audit", "plan"};

void check_message(const relsim::InputError& e) {
  const std::string_view m = e.what();
  if (m.empty() || m.size() > 4096) std::abort();
  for (const char c : m)
    if (static_cast<unsigned char>(c) < 0x20) std::abort();
}

bool control_free(std::string_view text) {
  for (const char c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  return true;
}

bool valid_name(std::string_view key) {
  if (key.empty() || key.size() > 32) return false;
  const auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); };
  if (!alpha(key[0])) return false;
  for (const char c : key)
    if (!alpha(c) && !(c >= '0' && c <= '9') && c != '-') return false;
  return true;
}

void check_target(std::string_view input, const relsim::ui::Target& t) {
  if (input.size() > relsim::ui::kMaxTargetBytes) std::abort();
  if (t.path.empty() || t.path[0] != '/' || !control_free(t.path)) std::abort();
  if (t.params.size() > relsim::ui::kMaxParameters) std::abort();
  std::set<std::string> names;
  for (const auto& [key, value] : t.params) {
    if (!valid_name(key) || !control_free(value) || !names.insert(key).second) std::abort();
  }
}

void check_args(std::string_view endpoint, const Params& params, const std::vector<std::string>& args) {
  if (args.size() < 1 + params.size() || args[0] != endpoint) std::abort();
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& [key, value] = params[i];
    const std::string& a = args[1 + i];
    if (a != "--" + key && a != "--" + key + "=" + value) std::abort();
    if (a == "--" + key + "=" + value && value.empty()) std::abort();
  }
  for (std::size_t i = 1 + params.size(); i < args.size(); ++i)
    if (args[i] != "--json" && args[i] != "--per-task" && args[i] != "--timeline") std::abort();
}

void run_endpoints(const Params& params) {
  for (const char* endpoint : kEndpoints) {
    try {
      check_args(endpoint, params, relsim::ui::command_args(endpoint, params));
    } catch (const relsim::InputError& e) {
      check_message(e);
    }
  }
}

Params raw_params(std::string_view bytes) {
  Params params;
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t nul = bytes.find('\0', start);
    parts.emplace_back(bytes.substr(start, nul - start));
    if (nul == std::string_view::npos) break;
    start = nul + 1;
  }
  for (std::size_t i = 0; i + 1 < parts.size(); i += 2) params.emplace_back(parts[i], parts[i + 1]);
  return params;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (!input.empty() && input[0] == '\0') {
    run_endpoints(raw_params(input.substr(1)));
    return 0;
  }
  try {
    const relsim::ui::Target t = relsim::ui::parse_target(input);
    check_target(input, t);
    run_endpoints(t.params);
  } catch (const relsim::InputError& e) {
    check_message(e);
  }
  return 0;
}
