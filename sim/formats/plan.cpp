#include "relsim/formats/plan.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "relsim/core/error.hpp"
#include "relsim/core/files.hpp"

namespace relsim {

std::string plan_name(const PlannedRequest& r) { return r ? std::string(to_string(*r)) : std::string("ok"); }

std::string write_plan(const Plan& plan) {
  std::string out = dump_json(plan.header) + "\n";
  for (const auto& t : plan.tasks) {
    out += fmt::format("{{\"task\": {}, \"requests\": [", t.task);
    for (std::size_t i = 0; i < t.requests.size(); ++i) out += (i ? ", \"" : "\"") + plan_name(t.requests[i]) + "\"";
    out += "]";
    // Time mode: shortest round-trip decimals, so a reader gets the same doubles.
    if (!t.at_seconds.empty())
      out += fmt::format(", \"at_seconds\": [{}], \"seconds\": {}", fmt::join(t.at_seconds, ", "), t.seconds);
    out += "}\n";
  }
  return out;
}

namespace {

// A time-mode task line's "at_seconds" and "seconds" (both or neither): one
// finite start >= 0 per request, and a finite wall time >= 0.
void read_times(const Json& j, const std::string& at, TaskPlan& tp) {
  if (!j.contains("at_seconds") && !j.contains("seconds")) return;
  const auto seconds_ok = [](const Json& v) {
    return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0.0;
  };
  if (!j.contains("at_seconds") || !j["at_seconds"].is_array() || j["at_seconds"].size() != tp.requests.size())
    throw InputError(fmt::format("{}: \"at_seconds\" must be an array of one start per request", at));
  if (!j.contains("seconds") || !seconds_ok(j["seconds"]))
    throw InputError(fmt::format("{}: \"seconds\" must be a finite number >= 0", at));
  for (const auto& v : j["at_seconds"]) {
    if (!seconds_ok(v))
      throw InputError(fmt::format("{}: at_seconds entry {} is not a finite number >= 0", at, json_excerpt(v)));
    tp.at_seconds.push_back(v.get<double>());
  }
  tp.seconds = j["seconds"].get<double>();
}

}  // namespace

Plan parse_plan(const std::string& text, const std::string& where) {
  Plan plan;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  bool have_header = false;
  std::int64_t declared = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string at = fmt::format("{}:{}", where, number);
    Json j;
    try {
      j = Json::parse(line);
    } catch (const Json::exception&) {  // parse_error, and out_of_range for a number such as 1e400
      throw InputError(fmt::format("{}: not a JSON object", at));
    }
    if (!j.is_object()) throw InputError(fmt::format("{}: not a JSON object", at));
    if (!have_header) {
      if (!j.contains("relsim_plan") || j["relsim_plan"] != 1)
        throw InputError(fmt::format("{}: the first line must be a plan header with \"relsim_plan\": 1", at));
      if (!j.contains("tasks") || !j["tasks"].is_number_integer() || j["tasks"].get<std::int64_t>() < 1 ||
          j["tasks"].get<std::int64_t>() > kMaxPlanTasks)
        throw InputError(fmt::format("{}: header \"tasks\" must be an integer in [1, {}]", at, kMaxPlanTasks));
      declared = j["tasks"].get<std::int64_t>();
      plan.header = std::move(j);
      have_header = true;
      continue;
    }
    const auto expected = static_cast<std::int64_t>(plan.tasks.size());
    if (expected >= declared) throw InputError(fmt::format("{}: more task lines than the header's {} tasks", at, declared));
    if (!j.contains("task") || !j["task"].is_number_integer() || j["task"].get<std::int64_t>() != expected)
      throw InputError(fmt::format("{}: \"task\" must be {} (tasks in order from 0)", at, expected));
    if (!j.contains("requests") || !j["requests"].is_array() || j["requests"].empty())
      throw InputError(fmt::format("{}: \"requests\" must be a non-empty array of \"ok\" or fault kinds", at));
    TaskPlan tp;
    tp.task = expected;
    for (const auto& r : j["requests"]) {
      if (!r.is_string()) throw InputError(fmt::format("{}: request {} is not a string", at, json_excerpt(r)));
      const auto name = r.get<std::string>();
      if (name == "ok") {
        tp.requests.push_back(std::nullopt);
        continue;
      }
      try {
        tp.requests.push_back(parse_fault_kind(name));
      } catch (const InputError& e) {
        throw InputError(fmt::format("{}: {}", at, e.what()));
      }
    }
    read_times(j, at, tp);
    plan.tasks.push_back(std::move(tp));
  }
  if (!have_header) throw InputError(fmt::format("{}: empty plan, no header", where));
  if (static_cast<std::int64_t>(plan.tasks.size()) != declared)
    throw InputError(fmt::format("{}: the header declares {} tasks, the file has {}", where, declared, plan.tasks.size()));
  return plan;
}

Plan read_plan(const std::string& path) {
  return parse_plan(read_file(path, "plan file"), path);
}

}  // namespace relsim
