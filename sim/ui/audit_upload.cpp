// POST /api/audit (audit_upload.hpp): the page sends a plan and a request log
// as text; `relsim audit` reads files. So the texts go into a folder of
// their own, made by mkdtemp (mode 0700, a fresh name: no other user can
// read or replace them), for just as long as the command runs, and the
// folder is removed whatever happens.
#include "ui/audit_upload.hpp"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/json.hpp"

namespace relsim::ui {
namespace {

namespace fs = std::filesystem;

// The body must be one flat object: a nested value is refused as it opens,
// so a body of a million '[' costs nothing.
struct NotFlat {};

// The temporary folder or a file in it could not be made.
struct UploadError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class PrivateDir {
 public:
  PrivateDir() {
    std::error_code ec;
    const fs::path base = fs::temp_directory_path(ec);
    std::string pattern = ((ec ? fs::path("/tmp") : base) / "relsim-ui-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw UploadError(fmt::format("cannot make a folder {}", pattern));
    path_ = pattern;
  }
  ~PrivateDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;

  // Writes `text` to NAME in the folder; returns its path.
  std::string write(std::string_view name, const std::string& text) const {
    const std::string file = (path_ / name).string();
    std::ofstream out(file, std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) throw UploadError(fmt::format("cannot write {}", file));
    return file;
  }

 private:
  fs::path path_;
};

}  // namespace

AuditUpload parse_audit_body(std::string_view body) {
  Json json;
  try {
    json = Json::parse(body, [](int depth, Json::parse_event_t event, Json&) {
      if (depth > 0 && (event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start))
        throw NotFlat{};
      return true;
    });
  } catch (const NotFlat&) {
    throw InputError("the body's plan and log must be strings: give {\"plan\": TEXT, \"log\": TEXT}");
  } catch (const Json::exception& e) {
    throw InputError(fmt::format("the body is not JSON ({}): give {{\"plan\": TEXT, \"log\": TEXT}}", e.what()));
  }
  if (!json.is_object())
    throw InputError("the body is not a JSON object: give {\"plan\": TEXT, \"log\": TEXT}");
  for (const auto& [key, value] : json.items())
    if (key != "plan" && key != "log")
      throw InputError(fmt::format("the body has the key {}: it takes only plan and log", json_excerpt(key, 64)));
  AuditUpload upload;
  for (const auto& [key, field] : {std::pair{"plan", &upload.plan}, std::pair{"log", &upload.log}}) {
    if (!json.contains(key) || !json[key].is_string())
      throw InputError(fmt::format("the body's {} must be a string: give {{\"plan\": TEXT, \"log\": TEXT}}", key));
    *field = json[key].get<std::string>();
  }
  return upload;
}

Work audit_work(CommandRunner runner, std::vector<std::string> args, AuditUpload upload) {
  return [runner = std::move(runner), args = std::move(args),
          upload = std::move(upload)](const CommandHooks& hooks) -> CommandResult {
    std::vector<std::string> line = args;
    try {
      const PrivateDir dir;
      line.push_back("--plan=" + dir.write("plan.jsonl", upload.plan));
      line.push_back("--log=" + dir.write("log.jsonl", upload.log));
      return runner(line, hooks);
    } catch (const UploadError& e) {
      return {3, "", fmt::format("cannot hand the upload to relsim audit: {}", e.what())};
    }
  };
}

}  // namespace relsim::ui
