// The server's shared tables (server_state.hpp).
#include "server/server_state.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "server/connection.hpp"
#include "server/server_wire.hpp"

namespace relsim::mock {
namespace {

// What a logged request costs against max_log_bytes: its strings plus a
// rough allowance per header.
std::size_t size_of(const LoggedRequest& r) {
  std::size_t n = sizeof(LoggedRequest) + r.method.size() + r.target.size() + r.body.size();
  for (const auto& [k, v] : r.headers) n += k.size() + v.size() + 64;
  return n;
}

JournalRequest journal_request(std::int64_t task, const LoggedRequest& r) {
  JournalRequest j;
  j.task = task;
  j.index = r.index;
  j.entry = r.entry ? to_json(*r.entry) : Json(nullptr);
  j.retry_count = r.header("x-stainless-retry-count");
  j.body_bytes = r.body_bytes;
  j.received_ms = r.received_ms;
  j.tenant = r.tenant;
  j.dialect = r.dialect;
  j.fallback = r.fallback;
  return j;
}

// A request answered without an entry (refused, a bad method or body), for the metrics.
MetricsRequest refused_request(const JournalRequest& line, int status, double finished_ms) {
  MetricsRequest m;
  m.dialect = line.dialect;
  m.status = status;
  m.body_bytes = line.body_bytes;
  m.seconds = (finished_ms - line.received_ms) / 1000.0;
  return m;
}

}  // namespace

std::string ServerState::metrics_text() const {
  return metrics_.text(connection_count(), accepted(), config_.upstream.has_value(), book_ != nullptr);
}

double ServerState::now_ms() const {
  return std::chrono::duration<double, std::milli>(Clock::now() - start_).count();
}

std::string ServerState::fresh_request_id() { return fmt::format("req_relsim_x{}", next_request_id_++); }

// --- scripts and logs ---------------------------------------------------------

void ServerState::set_script(std::int64_t task, std::vector<ScriptEntry> entries,
                             std::optional<std::vector<ScriptEntry>> fallback) {
  if (outage_)
    throw InputError("the server runs in outage mode (--outage): every task is answered by the outage schedule, "
                     "scripts do not apply");
  if (chain_)
    throw InputError("the server runs in chain mode: every task's requests walk the fault chain, scripts do not apply");
  if (task < 0) throw InputError(fmt::format("task = {} is out of range: it must be >= 0", task));
  if (entries.size() > kMaxScriptEntries)
    throw InputError(fmt::format("script of task {} has {} entries: at most {}", task, entries.size(),
                                 kMaxScriptEntries));
  if (fallback && fallback->size() != entries.size())
    throw InputError(fmt::format("script of task {}: \"fallback\" has {} entries and \"responses\" {}: one of each "
                                 "per request",
                                 task, fallback->size(), entries.size()));
  std::lock_guard lock(mu_);
  auto it = tasks_.find(task);
  if (it == tasks_.end()) {
    if (tasks_.size() >= config_.max_tasks)
      throw InputError(fmt::format("task {} would be task number {}: the server holds at most {} tasks", task,
                                   tasks_.size() + 1, config_.max_tasks));
    it = tasks_.emplace(task, TaskState{}).first;
  }
  TaskState& t = it->second;
  t.script.assign(std::make_move_iterator(entries.begin()), std::make_move_iterator(entries.end()));
  t.endless_ok = false;
  t.has_fallback = fallback.has_value();
  t.fallback.clear();
  if (fallback) t.fallback.assign(std::make_move_iterator(fallback->begin()), std::make_move_iterator(fallback->end()));
}

// Appends to the task's log unless a cap is reached.
std::size_t ServerState::append_log(TaskState& t, LoggedRequest&& r) {
  const std::size_t size = size_of(r);
  if (t.log.size() >= config_.max_log_entries || log_bytes_ + size > config_.max_log_bytes) {
    ++t.dropped;
    return kNotLogged;
  }
  log_bytes_ += size;
  t.log.push_back(std::move(r));
  return t.log.size() - 1;
}

TaskState* ServerState::live_task_locked(std::int64_t task, std::string& why) {
  auto it = tasks_.find(task);
  if (it != tasks_.end()) return &it->second;
  if (tasks_.size() >= config_.max_tasks) {
    why = fmt::format("task {} would be task number {}: the server holds at most {} tasks", task, tasks_.size() + 1,
                      config_.max_tasks);
    return nullptr;
  }
  return &tasks_.emplace(task, TaskState{}).first->second;
}

TaskState* ServerState::replay_task_locked(std::int64_t task, std::string& why) {
  TaskState* t = live_task_locked(task, why);
  if (t) t->endless_ok = true;
  return t;
}

Popped ServerState::pop(std::int64_t task, LoggedRequest&& r) {
  Popped p;
  p.dialect = r.dialect;
  p.body_bytes = r.body_bytes;
  p.received_ms = r.received_ms;
  JournalRequest line;
  {
    std::lock_guard lock(mu_);
    TaskState* found = nullptr;
    if (outage_ || chain_) {
      found = live_task_locked(task, p.why);
    } else if (auto it = tasks_.find(task); it != tasks_.end()) {
      found = &it->second;
    } else if (book_) {
      found = replay_task_locked(task, p.why);
    } else {
      p.why = fmt::format("task {} has no script: set one with POST /control/tasks/{}/script", task, task);
    }
    if (found == nullptr) return p;
    if (r.fallback && !found->has_fallback) {
      // Logged and journaled as a request refused before taking an entry (no index), as a 405 or 400 is.
      p.why = fmt::format("task {} has no fallback column: the path /t/{}/fallback/ answers a plan made with "
                          "relsim plan --fallback-after (or a script with \"fallback\" entries)",
                          task, task);
      r.status = 404;
      line = journal_request(task, r);
      p.slot = append_log(*found, std::move(r));
    } else {
      take_locked(*found, task, std::move(r), p, line);
    }
  }
  p.journal = journal_.begin(std::move(line));
  return p;
}

void ServerState::take_locked(TaskState& t, std::int64_t task, LoggedRequest&& r, Popped& p, JournalRequest& line) {
  p.index = r.index = t.served++;
  if (outage_) {
    // The state when the request was read, on the server's clock.
    const double at = r.received_ms / 1000.0 / outage_->config().time_scale;
    t.script.push_back(outage_->bad_at(at) ? ScriptEntry::of(outage_->kind_of(task, p.index)) : ScriptEntry::ok());
  } else if (chain_) {
    const std::optional<FaultKind> kind = chain_->at(task, p.index, t.last_bad);
    t.last_bad = kind.has_value();
    t.script.push_back(kind ? ScriptEntry::of(*kind) : ScriptEntry::ok());
  } else if (t.endless_ok) {
    t.script.push_back(ScriptEntry::ok());
  }
  std::deque<ScriptEntry>& column = r.fallback ? t.fallback : t.script;
  std::deque<ScriptEntry>& other = r.fallback ? t.script : t.fallback;
  if (column.empty()) {
    p.why = fmt::format(
        "the script of task {} is exhausted after {} requests: the client sent more requests than the plan "
        "holds (make the plan with relsim plan --max-requests)",
        task, t.taken);
    r.status = 404;
    line = journal_request(task, r);
    line.exhausted = true;
  } else {
    p.found = true;
    p.entry = std::move(column.front());
    column.pop_front();
    if (!other.empty()) other.pop_front();
    ++t.taken;
    p.epoch = t.release_epoch;
    r.entry = p.entry;
    line = journal_request(task, r);
  }
  p.slot = append_log(t, std::move(r));
}

// The journal line is written before the task's log says the request ended,
// so whoever waits on the log (wait_finished) finds the line there too.
void ServerState::log_unscripted(std::int64_t task, LoggedRequest&& r, int status) {
  JournalRequest line;
  {
    std::lock_guard lock(mu_);
    if (tasks_.find(task) == tasks_.end()) {
      // A replay answers any task: one whose first request missed is logged too.
      std::string why;
      if (!book_ || replay_task_locked(task, why) == nullptr) return;
    }
    line = journal_request(task, r);
  }
  const double t_ms = now_ms();
  journal_.write_ended(line, status, "complete", t_ms);
  metrics_.request(refused_request(line, status, t_ms));
  std::lock_guard lock(mu_);
  r.status = status;
  r.end = "complete";
  r.finished_ms = t_ms;
  append_log(tasks_.at(task), std::move(r));  // tasks are never removed
  changed_.notify_all();
}

void ServerState::log_refused(std::int64_t task, LoggedRequest&& r, int status, std::string_view refused) {
  JournalRequest line = journal_request(task, r);
  line.refused = refused;
  const double t_ms = now_ms();
  journal_.write_ended(line, status, "complete", t_ms);
  metrics_.request(refused_request(line, status, t_ms));
  std::lock_guard lock(mu_);
  auto it = tasks_.find(task);
  if (it != tasks_.end()) {
    r.status = status;
    r.end = "complete";
    r.finished_ms = t_ms;
    append_log(it->second, std::move(r));
  }
  changed_.notify_all();
}

void ServerState::finish(std::int64_t task, const Popped& p, int status, std::string_view end, Json upstream,
                         std::optional<double> first_event_ms) {
  const double t_ms = now_ms();
  // A reply the stop cut short (its writes fail once the socket is closed)
  // ended because the server stopped, not because the client left.
  const std::string_view how = end == "client_gone" && stopping() ? "stopped" : end;
  if (p.journal) {
    MetricsRequest m;
    m.dialect = p.dialect;
    m.status = status;
    m.fault = p.found ? entry_name(p.entry) : "none";
    m.body_bytes = p.body_bytes;
    m.seconds = (t_ms - p.received_ms) / 1000.0;
    if (first_event_ms) m.first_event_seconds = (*first_event_ms - p.received_ms) / 1000.0;
    if (upstream.is_object()) {
      if (const auto h = upstream.find("headers_ms"); h != upstream.end() && h->is_number())
        m.upstream_headers_seconds = h->get<double>() / 1000.0;
      m.upstream_bytes = upstream.value("bytes", std::size_t{0});
    }
    journal_.end(p.journal, status, how, t_ms, std::move(upstream));
    metrics_.request(m);
  }
  std::lock_guard lock(mu_);
  auto it = tasks_.find(task);
  if (it != tasks_.end() && p.slot < it->second.log.size()) {
    LoggedRequest& r = it->second.log[p.slot];
    r.status = status;
    r.end = std::string(how);
    r.finished_ms = t_ms;
  }
  changed_.notify_all();
}

std::optional<OutageView> ServerState::outage_view() {
  if (!outage_) return std::nullopt;
  const double now = now_ms() / 1000.0 / outage_->config().time_scale;
  std::lock_guard lock(mu_);
  return outage_->view(now);
}

std::vector<std::int64_t> ServerState::task_ids() const {
  std::vector<std::int64_t> ids;
  {
    std::lock_guard lock(mu_);
    ids.reserve(tasks_.size());
    for (const auto& [task, t] : tasks_) ids.push_back(task);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

bool ServerState::report_outcome(std::int64_t task, std::string_view word, std::string_view detail) {
  {
    std::lock_guard lock(mu_);
    if (tasks_.find(task) == tasks_.end()) return false;
  }
  journal_.outcome(task, word, detail, now_ms());
  return true;
}

void ServerState::set_plan_header(Json header) {
  std::lock_guard lock(mu_);
  plan_header_ = std::move(header);
}

Json ServerState::plan_header() const {
  std::lock_guard lock(mu_);
  return plan_header_;
}

TaskLog ServerState::log(std::int64_t task) const {
  std::lock_guard lock(mu_);
  TaskLog out;
  out.task = task;
  if (auto it = tasks_.find(task); it != tasks_.end()) {
    out.requests = it->second.log;
    out.dropped = it->second.dropped;
  }
  return out;
}

std::size_t ServerState::finished_locked(std::int64_t task) const {
  auto it = tasks_.find(task);
  if (it == tasks_.end()) return 0;
  std::size_t n = 0;
  for (const auto& r : it->second.log) n += !r.end.empty();
  return n;
}

bool ServerState::wait_finished(std::int64_t task, std::size_t count, std::chrono::milliseconds limit) const {
  std::unique_lock lock(mu_);
  return changed_.wait_for(lock, limit, [&] { return finished_locked(task) >= count; });
}

// --- holds and gates ----------------------------------------------------------

std::optional<std::uint64_t> ServerState::begin_hold(const std::shared_ptr<Connection>& conn, std::uint64_t seq,
                                                     std::int64_t task, std::uint64_t epoch,
                                                     const std::string& gate) {
  std::lock_guard lock(mu_);
  if (stopping_) return std::nullopt;
  if (!gate.empty()) {
    auto g = gates_.find(gate);
    if (g == gates_.end()) {
      if (gates_.size() >= kMaxGates) return std::nullopt;
      g = gates_.emplace(gate, false).first;
    }
    if (g->second) return std::nullopt;
  } else {
    auto t = tasks_.find(task);
    if (t != tasks_.end() && t->second.release_epoch > epoch) return std::nullopt;
  }
  const std::uint64_t id = next_hold_++;
  holds_.emplace(id, HoldRec{task, gate, conn, seq});
  changed_.notify_all();
  return id;
}

void ServerState::end_hold(std::uint64_t id) {
  std::lock_guard lock(mu_);
  holds_.erase(id);
  changed_.notify_all();
}

template <class Match>
std::size_t ServerState::collect_wakeups_locked(Match match, Wakeups& out) const {
  std::size_t n = 0;
  for (const auto& [id, h] : holds_)
    if (match(h)) {
      ++n;
      if (auto c = h.conn.lock()) out.emplace_back(std::move(c), h.seq);
    }
  return n;
}

void ServerState::wake(Wakeups wakeups) {
  for (auto& [c, seq] : wakeups) net::post(c->executor(), [c = c, seq = seq] { c->wake_hold(seq); });
}

std::size_t ServerState::release(std::int64_t task) {
  Wakeups wakeups;
  std::size_t n = 0;
  {
    std::lock_guard lock(mu_);
    if (auto t = tasks_.find(task); t != tasks_.end()) ++t->second.release_epoch;
    n = collect_wakeups_locked([&](const HoldRec& h) { return h.task == task && h.gate.empty(); }, wakeups);
  }
  wake(std::move(wakeups));
  return n;
}

std::size_t ServerState::open_gate(const std::string& name) {
  if (!wire::valid_gate_name(name))
    throw InputError(fmt::format("gate '{}' is not a gate name: use 1 to 64 of A-Z a-z 0-9 _ . -", name.substr(0, 100)));
  Wakeups wakeups;
  std::size_t n = 0;
  {
    std::lock_guard lock(mu_);
    auto g = gates_.find(name);
    if (g == gates_.end()) {
      if (gates_.size() >= kMaxGates)
        throw InputError(fmt::format("gate '{}' would be gate number {}: at most {} gates", name, gates_.size() + 1,
                                     kMaxGates));
      g = gates_.emplace(name, true).first;
    }
    g->second = true;
    n = collect_wakeups_locked([&](const HoldRec& h) { return h.gate == name; }, wakeups);
  }
  wake(std::move(wakeups));
  return n;
}

std::size_t ServerState::held_locked(std::int64_t task) const {
  std::size_t n = 0;
  for (const auto& [id, h] : holds_) n += h.task == task;
  return n;
}

std::size_t ServerState::held(std::int64_t task) const {
  std::lock_guard lock(mu_);
  return held_locked(task);
}

bool ServerState::wait_held(std::int64_t task, std::size_t count, std::chrono::milliseconds limit) const {
  std::unique_lock lock(mu_);
  return changed_.wait_for(lock, limit, [&] { return held_locked(task) == count; });
}

// --- connections --------------------------------------------------------------

bool ServerState::add_connection(const std::shared_ptr<Connection>& c, std::uint64_t& id) {
  std::lock_guard lock(mu_);
  if (stopping_ || conns_.size() >= config_.max_connections) return false;
  id = next_conn_++;
  conns_.emplace(id, c);
  ++accepted_;
  return true;
}

void ServerState::remove_connection(std::uint64_t id) {
  std::lock_guard lock(mu_);
  conns_.erase(id);
  changed_.notify_all();
}

std::size_t ServerState::connection_count() const {
  std::lock_guard lock(mu_);
  return conns_.size();
}

std::size_t ServerState::accepted() const {
  std::lock_guard lock(mu_);
  return accepted_;
}

bool ServerState::stopping() const {
  std::lock_guard lock(mu_);
  return stopping_;
}

std::vector<std::shared_ptr<Connection>> ServerState::begin_stop() {
  std::vector<std::shared_ptr<Connection>> open;
  std::lock_guard lock(mu_);
  stopping_ = true;
  for (const auto& [id, weak] : conns_)
    if (auto c = weak.lock()) open.push_back(std::move(c));
  changed_.notify_all();
  return open;
}

}  // namespace relsim::mock
