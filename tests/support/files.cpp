#include "support/files.hpp"

#include <unistd.h>

#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include "support/run.hpp"

namespace relsim::test {
namespace fs = std::filesystem;
namespace {

struct ScratchDir {
  fs::path path;
  explicit ScratchDir(const std::string& tag)
      : path(fs::temp_directory_path() / ("relsim_" + tag + "." + std::to_string(::getpid()))) {
    fs::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

fs::path scratch(const std::string& tag) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<ScratchDir>> dirs;
  std::lock_guard lock(mu);
  auto& dir = dirs[tag];
  if (!dir) dir = std::make_unique<ScratchDir>(tag);
  return dir->path;
}

fs::path write_temp(const std::string& tag, const std::string& name, const std::string& text) {
  const fs::path path = scratch(tag) / name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

fs::path build_dir() { return fs::path(relsim_exe()).parent_path(); }

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string tail(const std::string& text, std::size_t lines) {
  if (text.empty()) return text;
  std::size_t at = text.size();
  for (std::size_t n = 0; n <= lines && at != std::string::npos && at > 0; ++n) at = text.rfind('\n', at - 1);
  return at == std::string::npos ? text : text.substr(at + 1);
}

}  // namespace relsim::test
