// The hop's request and answer as each side gets them (upstream_framing.hpp).
#include "server/upstream_framing.hpp"

#include <iterator>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/http_text.hpp"
#include "server/routes.hpp"

namespace relsim::mock {
namespace {

namespace beast = boost::beast;

bool hop_by_hop(beast::string_view name) {
  // expect: the proxy has answered 100-continue itself and has the whole body.
  for (const char* h : {"connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization",
                        "te", "trailer", "transfer-encoding", "upgrade", "content-length", "host", "expect"})
    if (beast::iequals(name, h)) return true;
  return false;
}

std::string base_path_of(const Upstream& up, std::int64_t task) {
  std::string base = up.base_path;
  if (const std::size_t at = base.find(kTaskInPath); at != std::string::npos)
    base.replace(at, kTaskInPath.size(), std::to_string(task));
  return base;
}

}  // namespace

std::string api_target(const Request& req) {
  const std::string_view target(req.target().data(), req.target().size());
  const std::size_t q = target.find('?');
  const std::vector<std::string_view> parts = split_path(target.substr(0, q));
  std::size_t from = parts.size() >= 2 && parts[0] == "t" ? 2 : 0;
  std::string out;
  for (; from < parts.size(); ++from) out.append("/").append(parts[from]);
  if (q != std::string_view::npos) out.append(target.substr(q));
  return out;
}

std::string upstream_request(const Request& req, const Upstream& up, const std::string& task_header,
                             std::int64_t task) {
  std::string out;
  out.reserve(512 + req.body().size());
  fmt::format_to(std::back_inserter(out), "{} {}{} HTTP/1.1\r\n", sv(req.method_string()), base_path_of(up, task),
                 api_target(req));
  for (const auto& field : req) {
    const beast::string_view name = field.name_string();
    if (hop_by_hop(name) || beast::iequals(name, "accept-encoding") ||
        (!task_header.empty() && beast::iequals(name, task_header)))
      continue;
    fmt::format_to(std::back_inserter(out), "{}: {}\r\n", sv(name), sv(field.value()));
  }
  out += "accept-encoding: identity\r\n";
  const bool default_port = up.port == (up.tls ? 443 : 80);
  if (default_port) fmt::format_to(std::back_inserter(out), "host: {}\r\n", up.host);
  else fmt::format_to(std::back_inserter(out), "host: {}:{}\r\n", up.host, up.port);
  // A length as Beast's prepare_payload gives it: for a body, and for the methods that mean one.
  const http::verb m = req.method();
  if (!req.body().empty() || m == http::verb::post || m == http::verb::put || m == http::verb::options)
    fmt::format_to(std::back_inserter(out), "content-length: {}\r\n", req.body().size());
  out += "\r\n";
  out += req.body();
  return out;
}

std::string client_head(const http::response_header<>& res, bool keep, bool bodiless,
                        std::optional<std::size_t> length) {
  std::vector<std::pair<std::string, std::string>> fields;
  for (const auto& field : res) fields.emplace_back(sv(field.name_string()), sv(field.value()));
  return framed_head(static_cast<int>(res.result_int()), sv(res.reason()), fields, keep, bodiless, length);
}

std::string framed_head(int status, std::string_view reason, const std::vector<std::pair<std::string, std::string>>& fields,
                        bool keep, bool bodiless, std::optional<std::size_t> length) {
  std::string out;
  out.reserve(512);
  if (reason.empty()) reason = sv(http::obsolete_reason(http::int_to_status(static_cast<unsigned>(status))));
  if (reason.empty() || reason.front() == '<') reason = http_text::reason(status);  // Beast's "<unknown-status>": 529
  fmt::format_to(std::back_inserter(out), "HTTP/1.1 {} {}\r\n", status, reason);
  for (const auto& [name, value] : fields)
    if (!hop_by_hop(name) || (bodiless && beast::iequals(name, "content-length")))
      fmt::format_to(std::back_inserter(out), "{}: {}\r\n", name, value);
  if (length) fmt::format_to(std::back_inserter(out), "content-length: {}\r\n", *length);
  else if (!bodiless) out += "transfer-encoding: chunked\r\n";
  out += keep ? "connection: keep-alive\r\n\r\n" : "connection: close\r\n\r\n";
  return out;
}

RecordedExchange recording_of(const Request& req, std::int64_t task, const Popped& p, const Recorder& recorder) {
  RecordedExchange rec;
  rec.dialect = p.dialect;
  rec.task = task;
  rec.index = p.index;
  rec.entry = entry_name(p.entry);
  rec.method = std::string(sv(req.method_string()));
  rec.path = api_target(req);
  for (const auto& field : req) {
    std::string name = wire::lower_case(std::string(sv(field.name_string())));
    if (!recorder.left_out(name)) rec.request_headers.emplace_back(std::move(name), std::string(sv(field.value())));
  }
  rec.request_body = req.body();
  return rec;
}

}  // namespace relsim::mock
