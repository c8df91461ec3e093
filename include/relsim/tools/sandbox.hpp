#pragma once
// The folder the MCP tools server's note_write writes into (docs/tools.md,
// "The sandbox"). A tool's path is relative to it and must stay inside it:
// an absolute path, a `..` component, an empty path or component, a
// backslash or a control character is refused before anything is touched,
// and so is a path that a symbolic link inside the folder leads out of it.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace relsim::tools {

class Sandbox {
 public:
  // Creates the folder if it does not exist; throws InputError if it cannot.
  explicit Sandbox(std::filesystem::path root);

  const std::filesystem::path& root() const { return root_; }

  // The file a tool's path names, or the reason it is refused (one line
  // naming the path and the rule).
  std::filesystem::path resolve(std::string_view path, std::string& why) const;
  // Writes `text` to a resolved file, creating its folders; false (and why)
  // on an I/O error.
  bool write(const std::filesystem::path& file, std::string_view text, std::string& why) const;

  // Every regular file under the root: its path relative to the root (with
  // '/') and its size in bytes.
  std::map<std::string, std::uintmax_t> files() const;

 private:
  std::filesystem::path root_;  // absolute, canonical
};

}  // namespace relsim::tools
