// The tools server's sandbox (sandbox.hpp): the path guard, the writes and
// the listing the call log carries.
#include "relsim/tools/sandbox.hpp"

#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "relsim/core/error.hpp"

namespace relsim::tools {
namespace {

namespace fs = std::filesystem;

inline constexpr std::size_t kMaxPathBytes = 1024;

// The path as a client sent it, for a message: printable ASCII kept, the
// rest escaped, cut at 100 bytes.
std::string shown(std::string_view path) {
  std::string out;
  for (const char c : path.substr(0, 100)) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) out += c;
    else out += fmt::format("\\x{:02x}", u);
  }
  return path.size() > 100 ? out + "..." : out;
}

// The rule a path breaks, or empty.
std::string broken_rule(std::string_view path) {
  if (path.empty()) return "it is empty";
  if (path.size() > kMaxPathBytes) return fmt::format("it is over {} bytes", kMaxPathBytes);
  if (path.front() == '/') return "it is absolute";
  for (const char c : path) {
    if (c == '\\') return "it has a backslash";
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "it has a control character";
  }
  for (std::size_t start = 0; start <= path.size();) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (part.empty()) return "it has an empty component";
    if (part == "..") return "it has a '..' component";
    if (part == ".") return "it has a '.' component";
    start = end + 1;
  }
  return {};
}

}  // namespace

Sandbox::Sandbox(fs::path root) {
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec || !fs::is_directory(root))
    throw InputError(fmt::format("sandbox = '{}' is not a folder relsim can create or use: {}", root.string(),
                                 ec ? ec.message() : "it exists and is not a folder"));
  root_ = fs::canonical(root, ec);
  if (ec) throw InputError(fmt::format("sandbox = '{}' cannot be resolved: {}", root.string(), ec.message()));
}

fs::path Sandbox::resolve(std::string_view path, std::string& why) const {
  if (const std::string rule = broken_rule(path); !rule.empty()) {
    why = fmt::format("path '{}' is refused: {}; give a relative path inside the sandbox, such as notes/a.txt",
                      shown(path), rule);
    return {};
  }
  const fs::path file = root_ / fs::path(std::string(path));
  // A symbolic link inside the sandbox must not lead out of it.
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(file, ec);
  const auto [r, f] = std::mismatch(root_.begin(), root_.end(), real.begin(), real.end());
  if (ec || r != root_.end()) {
    why = fmt::format("path '{}' is refused: it leads out of the sandbox", shown(path));
    return {};
  }
  return file;
}

bool Sandbox::write(const fs::path& file, std::string_view text, std::string& why) const {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (ec || !out) {
    why = fmt::format("cannot write '{}': {}", fs::relative(file, root_, ec).generic_string(),
                      ec ? ec.message() : "it cannot be opened");
    return false;
  }
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) {
    why = "the write failed";
    return false;
  }
  return true;
}

std::map<std::string, std::uintmax_t> Sandbox::files() const {
  std::map<std::string, std::uintmax_t> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root_, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2)) out.emplace(fs::relative(it->path(), root_, e2).generic_string(), it->file_size(e2));
  }
  return out;
}

}  // namespace relsim::tools
