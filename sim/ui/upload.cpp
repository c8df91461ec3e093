// The workbench's uploads (upload.hpp): the page sends a plan and a request
// log (or a history file) as text; `relsim audit` (or `contention trend`)
// reads files. So the texts go into a folder of their own, made by mkdtemp (mode 0700, a fresh name: no other user can
// read or replace them), for just as long as the command runs, and the
// folder is removed whatever happens.
#include "ui/upload.hpp"

#include <stdlib.h>

#include <algorithm>
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

// {"plan": TEXT, "log": TEXT}: how the body should look, for the errors.
std::string shape(std::span<const UploadFile> files) {
  std::string out;
  for (const UploadFile& f : files) out += fmt::format("{}\"{}\": TEXT", out.empty() ? "" : ", ", f.field);
  return "{" + out + "}";
}

// "plan and log", "history".
std::string fields(std::span<const UploadFile> files) {
  std::string out;
  for (std::size_t i = 0; i < files.size(); ++i)
    out += fmt::format("{}{}", i == 0 ? "" : i + 1 == files.size() ? " and " : ", ", files[i].field);
  return out;
}

}  // namespace

std::vector<std::string> parse_upload_body(std::string_view body, std::span<const UploadFile> files) {
  Json json;
  try {
    json = Json::parse(body, [](int depth, Json::parse_event_t event, Json&) {
      if (depth > 0 && (event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start))
        throw NotFlat{};
      return true;
    });
  } catch (const NotFlat&) {
    throw InputError(fmt::format("the body's {} must be strings: give {}", fields(files), shape(files)));
  } catch (const Json::exception& e) {
    throw InputError(fmt::format("the body is not JSON ({}): give {}", e.what(), shape(files)));
  }
  if (!json.is_object()) throw InputError(fmt::format("the body is not a JSON object: give {}", shape(files)));
  for (const auto& item : json.items()) {
    const std::string& key = item.key();
    if (std::none_of(files.begin(), files.end(), [&](const UploadFile& f) { return f.field == key; }))
      throw InputError(fmt::format("the body has the key {}: it takes only {}", json_excerpt(key, 64), fields(files)));
  }
  std::vector<std::string> texts;
  for (const UploadFile& f : files) {
    const std::string key(f.field);
    if (!json.contains(key) || !json[key].is_string())
      throw InputError(fmt::format("the body's {} must be a string: give {}", key, shape(files)));
    texts.push_back(json[key].get<std::string>());
  }
  return texts;
}

Work upload_work(CommandRunner runner, std::vector<std::string> args, std::span<const UploadFile> files,
                 std::vector<std::string> texts) {
  return [runner = std::move(runner), args = std::move(args), files = std::vector<UploadFile>(files.begin(), files.end()),
          texts = std::move(texts)](const CommandHooks& hooks) -> CommandResult {
    std::vector<std::string> line = args;
    try {
      const PrivateDir dir;
      for (std::size_t i = 0; i < files.size(); ++i)
        line.push_back(files[i].option.empty() ? dir.write(files[i].name, texts[i])
                                               : fmt::format("{}={}", files[i].option, dir.write(files[i].name, texts[i])));
      return runner(line, hooks);
    } catch (const UploadError& e) {
      return {3, "", fmt::format("cannot hand the upload to relsim {}: {}", args.empty() ? "" : args[0], e.what()), ""};
    }
  };
}

}  // namespace relsim::ui
