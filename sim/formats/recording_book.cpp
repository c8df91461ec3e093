// The recordings a replay answers from, and the matching (recording_book.hpp).
#include "relsim/formats/recording_book.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/json.hpp"

namespace relsim {
namespace {

using Sorted = nlohmann::json;  // keys sorted at every level: the canonical form

// The deepest body compared field by field; a deeper one is compared as its bytes.
constexpr std::size_t kMaxMatchNesting = 64;

bool is_volatile(std::string_view field) {
  return std::find(std::begin(kVolatileFields), std::end(kVolatileFields), field) != std::end(kVolatileFields);
}

std::string_view path_only(std::string_view target) { return target.substr(0, target.find('?')); }

// The body's compared fields, keys sorted; null when the body is not a JSON
// object (or nests too deep), which is then compared as its bytes.
Sorted view_of(std::string_view body, const std::vector<std::string>& match) {
  Sorted all = Sorted::parse(body, nullptr, false);
  if (!all.is_object() || nested_deeper(all, kMaxMatchNesting)) return nullptr;
  Sorted out = Sorted::object();
  for (auto& [name, value] : all.items()) {
    const bool compared = match.empty() ? !is_volatile(name)
                                        : std::find(match.begin(), match.end(), name) != match.end();
    if (compared) out[name] = std::move(value);
  }
  return out;
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "\"" : ", \"") + n + "\"";
  return out;
}

// The compared fields whose values differ between two views (the whole
// body, as "(the body)", when either is not an object).
std::vector<std::string> differing(const Sorted& a, const Sorted& b) {
  if (a.is_null() || b.is_null()) return {"(the body)"};
  std::vector<std::string> out;
  // By their text, as the key compares them: 16 and 16.0 differ.
  for (const auto& [name, value] : a.items())
    if (!b.contains(name) || b[name].dump() != value.dump()) out.push_back(name);
  for (const auto& [name, value] : b.items())
    if (!a.contains(name)) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

bool field_name(std::string_view name) {
  return !name.empty() && name.size() <= 64 &&
         std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

}  // namespace

RecordingBook::RecordingBook(std::vector<RecordedExchange> recordings, std::vector<std::string> match)
    : match_(std::move(match)) {
  for (const std::string& name : match_)
    if (!field_name(name))
      throw InputError(fmt::format("--match '{}' is not a request-body field name: use letters, digits and '_', "
                                   "up to 64 of them (e.g. --match model,messages)",
                                   name.substr(0, 80)));
  const std::size_t given = recordings.size();
  for (RecordedExchange& x : recordings) {
    if (x.entry != "ok") ++skipped_.broken;
    else if (x.lossy) ++skipped_.lossy;
    else if (!replayable(x)) ++skipped_.client_gone;
    else add_locked(std::make_shared<const RecordedExchange>(std::move(x)));
  }
  if (given > 0 && all_.empty())
    throw InputError(fmt::format("none of the {} recorded exchanges can be replayed: {} were broken by a fault of the "
                                 "plan on their way (entry not ok), {} cut short when their client went away, {} are "
                                 "marked lossy (bytes that were not UTF-8); record a clean run (relsim proxy --p 0)",
                                 given, skipped_.broken, skipped_.client_gone, skipped_.lossy));
  if (all_.empty()) return;
  for (const std::string& name : match_) {
    const bool somewhere = std::any_of(all_.begin(), all_.end(), [&](const Entry& e) {
      const Json body = Json::parse(e.exchange->request_body, nullptr, false);
      return body.is_object() && body.contains(name);
    });
    if (!somewhere)
      throw InputError(fmt::format("--match '{}' is in no recording's request body ({} exchanges): name fields the "
                                   "recorded requests have, e.g. model,messages",
                                   name, all_.size()));
  }
}

std::string RecordingBook::key_of(Dialect dialect, std::string_view path, std::string_view body) const {
  const Sorted view = view_of(body, match_);
  return fmt::format("{}\n{}\n{}", dialect_name(dialect), path_only(path),
                     view.is_null() ? "raw:" + std::string(body) : view.dump());
}

void RecordingBook::add_locked(std::shared_ptr<const RecordedExchange> exchange) {
  std::string key = key_of(exchange->dialect, exchange->path, exchange->request_body);
  by_key_[key].push_back(all_.size());
  all_.push_back({std::move(exchange), std::move(key)});
}

bool whole_2xx(const RecordedExchange& x) { return x.status && *x.status / 100 == 2 && x.complete(); }

bool replayable(const RecordedExchange& x) {
  return x.entry == "ok" && !x.lossy && !x.stopped_early();
}

void RecordingBook::add(RecordedExchange exchange) {
  if (!replayable(exchange) || !whole_2xx(exchange)) return;
  auto shared = std::make_shared<const RecordedExchange>(std::move(exchange));
  std::lock_guard lock(mu_);
  add_locked(std::move(shared));
}

std::size_t RecordingBook::size() const {
  std::lock_guard lock(mu_);
  return all_.size();
}

RecordingBook::Found RecordingBook::find(Dialect dialect, std::string_view path, std::string_view body) const {
  const std::string key = key_of(dialect, path, body);
  std::vector<std::shared_ptr<const RecordedExchange>> same_dialect;
  std::size_t held = 0;
  {
    std::lock_guard lock(mu_);
    if (const auto it = by_key_.find(key); it != by_key_.end()) {
      Found found;
      for (const std::size_t i : it->second) found.matches.push_back(all_[i].exchange);
      return found;
    }
    held = all_.size();
    for (const Entry& e : all_)
      if (e.exchange->dialect == dialect) same_dialect.push_back(e.exchange);
  }
  // A miss: the nearest is sought without the lock, so other lookups go on meanwhile.
  return {{}, nearest(same_dialect, held, dialect, path, body)};
}


std::shared_ptr<const RecordedExchange> RecordingBook::Found::pick(std::int64_t task, std::int64_t index) const {
  std::shared_ptr<const RecordedExchange> best = matches.front();
  int rank = -1;  // +4: a whole 2xx answer; +2: the same task and index; +1: the same task
  for (const auto& x : matches) {
    const int r = (whole_2xx(*x) ? 4 : 0) + (x->task != task ? 0 : x->index == index ? 2 : 1);
    if (r > rank) best = x, rank = r;
    if (rank == 6) break;
  }
  return best;
}

std::string RecordingBook::nearest(const std::vector<std::shared_ptr<const RecordedExchange>>& candidates,
                                   std::size_t held, Dialect dialect, std::string_view path,
                                   std::string_view body) const {
  const std::string compared = match_.empty() ? std::string("every body field but \"metadata\", \"stream_options\" "
                                                            "and \"user\"")
                                              : fmt::format("the body fields {} (--match)", quoted_list(match_));
  const Sorted view = view_of(body, match_);
  const RecordedExchange* best = nullptr;
  std::vector<std::string> fewest;
  for (const auto& x : candidates) {
    std::vector<std::string> d = differing(view, view_of(x->request_body, match_));
    if (path_only(x->path) != path_only(path)) d.insert(d.begin(), "(the path)");
    if (!best || d.size() < fewest.size()) best = x.get(), fewest = std::move(d);
  }
  if (!best)
    return fmt::format("no recording answers this request: the replay holds {} exchanges and none in the {} "
                       "dialect",
                       held, dialect_name(dialect));
  const RecordedExchange& x = *best;
  return fmt::format("no recording answers this request (compared: {}); the nearest is {} (task {}, request {}), "
                     "which differs in {}",
                     compared, x.source.empty() ? std::string("one recorded on a miss") : x.source, x.task, x.index,
                     quoted_list(fewest));
}

}  // namespace relsim
