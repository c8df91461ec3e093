#include "support/npm_install.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "support/files.hpp"
#include "support/run.hpp"

namespace relsim::test {
namespace fs = std::filesystem;
namespace {

// Holds an exclusive flock on a file for its lifetime.
class FileLock {
 public:
  explicit FileLock(const fs::path& path) : fd_(::open(path.c_str(), O_CREAT | O_RDWR, 0644)) {
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

void copy_sources(const fs::path& source, const fs::path& dir, const std::vector<std::string>& files) {
  if (files.empty()) {
    for (const auto& entry : fs::directory_iterator(source))
      if (entry.is_regular_file())
        fs::copy_file(entry.path(), dir / entry.path().filename(), fs::copy_options::overwrite_existing);
    return;
  }
  for (const std::string& file : files) fs::copy_file(source / file, dir / file, fs::copy_options::overwrite_existing);
}

}  // namespace

std::string npm_install(const fs::path& source, const fs::path& dir, const std::vector<std::string>& files,
                        const std::string& package) {
  if (find_program("node").empty()) return "node is not on PATH (scripts/install-deps.sh --tests installs nodejs)";
  if (find_program("npm").empty()) return "npm is not on PATH (scripts/install-deps.sh --tests installs it)";
  fs::create_directories(dir);
  const FileLock lock(dir / ".install.lock");
  copy_sources(source, dir, files);
  const fs::path installed_lock = dir / "installed-package-lock.json";  // the lock node_modules holds
  const fs::path marker = dir / "node_modules" / package / "package.json";
  if (fs::exists(marker) && fs::exists(installed_lock) && slurp(installed_lock) == slurp(dir / "package-lock.json"))
    return "";
  fs::remove(installed_lock);
  RunOptions options;
  options.cwd = dir.string();
  options.timeout = 300;
  const RunResult ci =
      run_program({"npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"}, options);
  if (ci.code != 0 || !fs::exists(marker))
    return "npm ci could not install the packages " + (source / "package-lock.json").string() + " pins, in " +
           dir.string() + " (exit " + std::to_string(ci.code) + "):\n" + tail(ci.out + ci.err);
  fs::copy_file(dir / "package-lock.json", installed_lock, fs::copy_options::overwrite_existing);
  return "";
}

std::string npm_version(const fs::path& dir, const std::string& package) {
  const auto parsed = nlohmann::json::parse(slurp(dir / "node_modules" / package / "package.json"), nullptr, false);
  return parsed.is_object() ? parsed.value("version", "?") : "?";
}

}  // namespace relsim::test
