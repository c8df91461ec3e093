// A program relsim starts and reads (child_process.hpp): posix_spawnp with
// its stdout on a pipe.
#include "cli/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "relsim/core/error.hpp"

extern char** environ;

namespace relsim::cli {

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env, bool own_group)
    : group_(own_group) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw InputError(fmt::format("cannot make a pipe: {}", std::strerror(errno)));
  std::vector<std::string> strings = argv;
  std::vector<char*> args;
  for (auto& s : strings) args.push_back(s.data());
  args.push_back(nullptr);
  std::vector<std::string> env_strings(env);
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);  // dup2 clears O_CLOEXEC
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);   // Asio's sockets are not O_CLOEXEC
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  if (own_group) {
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  }
  const int rc = posix_spawnp(&pid_, args[0], &actions, &attributes, args.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (rc != 0) {
    ::close(pipe_fds[0]);
    pid_ = -1;
    throw InputError(fmt::format("cannot start '{}': {}", argv.front(), std::strerror(rc)));
  }
  out_ = pipe_fds[0];
}

ChildProcess::~ChildProcess() {
  if (out_ >= 0) ::close(out_);
  if (pid_ > 0) {
    ::kill(group_ ? -pid_ : pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
}

bool ChildProcess::read_line(std::string& line) {
  for (;;) {
    if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
      line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return true;
    }
    if (eof_) {
      if (buffer_.empty()) return false;
      line = std::move(buffer_);
      buffer_.clear();
      return true;
    }
    char chunk[8192];
    const ssize_t n = ::read(out_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) eof_ = true;
    else buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

namespace {

int code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

}  // namespace

int ChildProcess::wait() {
  if (pid_ < 0) return code_;
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  return code_ = code_of(status);
}

bool ChildProcess::ended(int& code) {
  if (pid_ > 0) {
    int status = 0;
    const pid_t got = ::waitpid(pid_, &status, WNOHANG);
    if (got == 0 || (got < 0 && errno == EINTR)) return false;
    code_ = got > 0 ? code_of(status) : 1;  // -1: not ours to wait for any more
    // What it started and left behind in its group would hold the pipe open.
    if (group_) ::kill(-pid_, SIGKILL);
    pid_ = -1;
  }
  code = code_;
  return true;
}

void ChildProcess::signal(int signal) {
  if (pid_ > 0) ::kill(group_ ? -pid_ : pid_, signal);
}

void ChildProcess::drain() {
  while (!eof_) {
    pollfd p{out_, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return;
    char chunk[8192];
    const ssize_t n = ::read(out_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) eof_ = true;
    else buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

}  // namespace relsim::cli
