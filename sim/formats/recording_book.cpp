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
  const Json checked = Json::parse(body, nullptr, false);
  if (!checked.is_object() || nested_deeper(checked, kMaxMatchNesting)) return nullptr;
  Sorted all = Sorted::parse(body, nullptr, false);
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
  for (const auto& [name, value] : a.items())
    if (!b.contains(name) || b[name] != value) out.push_back(name);
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
  for (RecordedExchange& x : recordings) {
    if (x.lossy)
      throw InputError(fmt::format("{}: the exchange is marked lossy (bytes that were not UTF-8 were replaced): "
                                   "it cannot be replayed as it was sent; record it again or remove the line",
                                   x.source));
    add_locked(std::make_shared<const RecordedExchange>(std::move(x)));
  }
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

void RecordingBook::add(RecordedExchange exchange) {
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
  std::lock_guard lock(mu_);
  const auto it = by_key_.find(key);
  if (it == by_key_.end()) return {{}, nearest_locked(dialect, path, body)};
  Found found;
  for (const std::size_t i : it->second) found.matches.push_back(all_[i].exchange);
  return found;
}

std::shared_ptr<const RecordedExchange> RecordingBook::Found::pick(std::int64_t task, std::int64_t index) const {
  std::shared_ptr<const RecordedExchange> best = matches.front();
  int rank = 0;  // 2: the same task and index; 1: the same task
  for (const auto& x : matches) {
    const int r = x->task != task ? 0 : x->index == index ? 2 : 1;
    if (r > rank) best = x, rank = r;
    if (rank == 2) break;
  }
  return best;
}

std::string RecordingBook::nearest_locked(Dialect dialect, std::string_view path, std::string_view body) const {
  const std::string compared =
      match_.empty() ? fmt::format("every body field but \"metadata\", \"stream_options\" and \"user\"")
                     : fmt::format("the body fields {} (--match)", quoted_list(match_));
  const Sorted view = view_of(body, match_);
  const Entry* nearest = nullptr;
  std::vector<std::string> fewest;
  for (const Entry& e : all_) {
    if (e.exchange->dialect != dialect) continue;
    std::vector<std::string> d = differing(view, view_of(e.exchange->request_body, match_));
    if (path_only(e.exchange->path) != path_only(path)) d.insert(d.begin(), "(the path)");
    if (!nearest || d.size() < fewest.size()) nearest = &e, fewest = std::move(d);
  }
  if (!nearest)
    return fmt::format("no recording answers this request: the replay holds {} exchanges and none in the {} "
                       "dialect",
                       all_.size(), dialect_name(dialect));
  const RecordedExchange& x = *nearest->exchange;
  return fmt::format("no recording answers this request (compared: {}); the nearest is {} (task {}, request {}), "
                     "which differs in {}",
                     compared, x.source.empty() ? std::string("one recorded on a miss") : x.source, x.task, x.index,
                     quoted_list(fewest));
}

}  // namespace relsim
