#include "relsim/formats/plan.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "relsim/core/error.hpp"
#include "relsim/core/files.hpp"
#include "relsim/core/policy.hpp"

namespace relsim {

std::string plan_name(const PlannedRequest& r) { return r ? std::string(to_string(*r)) : std::string("ok"); }

int plan_fallback_after(const Plan& plan) {
  const auto fb = plan.header.find("fallback");
  return fb == plan.header.end() ? 0 : fb->at("after").get<int>();  // checked by parse_plan
}

namespace {

// ["ok", "cut", ...]
std::string names(const std::vector<PlannedRequest>& requests) {
  std::string out = "[";
  for (std::size_t i = 0; i < requests.size(); ++i) out += (i ? ", \"" : "\"") + plan_name(requests[i]) + "\"";
  return out + "]";
}

}  // namespace

std::string write_plan(const Plan& plan) {
  std::string out = dump_json(plan.header) + "\n";
  for (const auto& t : plan.tasks) {
    out += fmt::format("{{\"task\": {}, \"requests\": {}", t.task, names(t.requests));
    if (!t.fallback.empty()) out += fmt::format(", \"fallback\": {}", names(t.fallback));
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

// A column of "ok" or fault kinds (`key` names it in errors).
std::vector<PlannedRequest> read_column(const Json& column, const std::string& at, const char* key) {
  std::vector<PlannedRequest> out;
  for (const auto& r : column) {
    if (!r.is_string()) throw InputError(fmt::format("{}: {} entry {} is not a string", at, key, json_excerpt(r)));
    const auto name = r.get<std::string>();
    if (name == "ok") {
      out.push_back(std::nullopt);
      continue;
    }
    try {
      out.push_back(parse_fault_kind(name));
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}", at, e.what()));
    }
  }
  return out;
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
      if (const auto fb = j.find("fallback"); fb != j.end()) {
        const auto after = fb->is_object() ? fb->find("after") : fb->end();
        if (after == fb->end() || !after->is_number_integer() || after->get<std::int64_t>() < 1 ||
            after->get<std::int64_t>() > kMaxRequestsPerCall)
          throw InputError(fmt::format("{}: header \"fallback\" = {} must be an object whose \"after\" is an integer in "
                                       "[1, {}]",
                                       at, json_excerpt(*fb), kMaxRequestsPerCall));
      }
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
    tp.requests = read_column(j["requests"], at, "requests");
    if (j.contains("fallback")) {
      if (!j["fallback"].is_array() || j["fallback"].size() != tp.requests.size())
        throw InputError(fmt::format("{}: \"fallback\" must be an array of \"ok\" or fault kinds, one per request "
                                     "({})",
                                     at, tp.requests.size()));
      tp.fallback = read_column(j["fallback"], at, "fallback");
    }
    read_times(j, at, tp);
    plan.tasks.push_back(std::move(tp));
  }
  if (!have_header) throw InputError(fmt::format("{}: empty plan, no header", where));
  const bool fallback = plan_fallback_after(plan) > 0;
  for (const TaskPlan& t : plan.tasks)
    if (t.fallback.empty() == fallback)
      throw InputError(fmt::format("{}: task {} {} a \"fallback\" column while the header {}: every task of a "
                                   "fallback plan has one, and no task of another",
                                   where, t.task, fallback ? "lacks" : "has",
                                   fallback ? "gives a fallback" : "gives none"));
  if (static_cast<std::int64_t>(plan.tasks.size()) != declared)
    throw InputError(fmt::format("{}: the header declares {} tasks, the file has {}", where, declared, plan.tasks.size()));
  return plan;
}

Plan read_plan(const std::string& path) {
  return parse_plan(read_file(path, "plan file"), path);
}

}  // namespace relsim
