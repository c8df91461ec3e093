#include "relsim/core/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "relsim/core/error.hpp"

namespace relsim {

std::string read_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot open {} '{}'", what, path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path tmp = target.parent_path() / fmt::format(".{}.tmp.{}", target.filename().string(), ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(fmt::format("cannot write '{}': cannot create a file in its folder", path));
    out << text;
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw InputError(fmt::format("cannot write '{}': write failed", path));
    }
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw InputError(fmt::format("cannot write '{}': {}", path, ec.message()));
  }
}

void check_appendable(const std::string& path, const std::string& what) {
  namespace fs = std::filesystem;
  const auto refuse = [&](const std::string& reason) {
    throw InputError(fmt::format("cannot append to {} '{}': {}", what, path, reason));
  };
  std::error_code ec;
  const fs::path target(path);
  if (fs::is_directory(target, ec)) refuse("it is a folder");
  if (fs::exists(target, ec)) {
    if (::access(path.c_str(), W_OK) != 0) refuse(std::strerror(errno));
    return;
  }
  const fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  if (!fs::is_directory(folder, ec)) refuse("its folder does not exist");
  if (::access(folder.c_str(), W_OK) != 0) refuse(std::strerror(errno));
}

void append_line(const std::string& path, const std::string& line, const std::string& what) {
  const std::string text = line + "\n";
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError(fmt::format("cannot append to {} '{}': {}", what, path, std::strerror(errno)));
  const ssize_t wrote = ::write(fd, text.data(), text.size());
  const int error = errno;
  ::close(fd);
  if (wrote != static_cast<ssize_t>(text.size()))
    throw InputError(fmt::format("cannot append to {} '{}': {}", what, path,
                                 wrote < 0 ? std::strerror(error) : "short write"));
}

}  // namespace relsim
