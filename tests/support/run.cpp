#include "support/run.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "relsim/cli/cli.hpp"
#include "support/sanitized.hpp"

extern char** environ;

namespace relsim::test {
namespace {

using Clock = std::chrono::steady_clock;

// The time `seconds` from now.
Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// An argv or envp as the char* array exec wants; built before fork, so the
// child only calls async-signal-safe functions (the tests run threads).
struct CStrings {
  std::vector<std::string> strings;
  std::vector<char*> pointers;
  explicit CStrings(std::vector<std::string> s) : strings(std::move(s)) {
    for (auto& a : strings) pointers.push_back(a.data());
    pointers.push_back(nullptr);
  }
  char** data() { return pointers.data(); }
};

// The test's environment with `extra` NAME=VALUE entries added or replacing.
std::vector<std::string> environment_with(const std::vector<std::string>& extra) {
  std::vector<std::string> out;
  const auto name_of = [](const std::string& e) { return e.substr(0, e.find('=')); };
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const bool replaced = std::any_of(extra.begin(), extra.end(),
                                      [&](const std::string& x) { return name_of(x) == name_of(entry); });
    if (!replaced) out.push_back(entry);
  }
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

void make_pipe(int fds[2]) {
  // Close-on-exec, so a child started meanwhile by another thread (or a
  // Background left running) never holds our ends open.
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
}

struct Decoded {
  int code;
  bool signaled;
};

Decoded decode(int status) {
  if (WIFEXITED(status)) return {WEXITSTATUS(status), false};
  if (WIFSIGNALED(status)) return {128 + WTERMSIG(status), true};
  return {-1, false};
}

// Forks and execs. In the child, stdin/stdout/stderr become `in`, `out` and
// `err` (-1: keep the test's own); everything else was built beforehand.
pid_t spawn(const std::vector<std::string>& argv, const RunOptions& options, int in, int out, int err) {
  if (argv.empty()) throw std::invalid_argument("run_program: empty argv");
  CStrings args(argv);
  CStrings envp(environment_with(options.env));
  const char* cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    if (options.new_process_group) ::setpgid(0, 0);
    // dup2 clears close-on-exec on the copy; a pipe that already is the
    // standard descriptor (the test's own was closed) keeps it otherwise.
    const auto redirect = [](int fd, int to) {
      if (fd == to)
        ::fcntl(fd, F_SETFD, 0);
      else if (fd >= 0)
        ::dup2(fd, to);
    };
    redirect(in, STDIN_FILENO);
    redirect(out, STDOUT_FILENO);
    redirect(err, STDERR_FILENO);
    if (cwd != nullptr && ::chdir(cwd) != 0) _exit(126);
    ::execvpe(args.data()[0], args.data(), envp.data());
    _exit(127);
  }
  if (options.new_process_group) ::setpgid(pid, pid);  // either side may win the race; both set the same
  return pid;
}

void kill_child(pid_t pid, bool group, int signal) { ::kill(group ? -pid : pid, signal); }

// Waits for `pid` up to `timeout` seconds (forever when negative); true once reaped.
bool reap(pid_t pid, double timeout, int* status) {
  const auto deadline = after(std::max(timeout, 0.0));
  for (;;) {
    const pid_t got = ::waitpid(pid, status, timeout < 0 ? 0 : WNOHANG);
    if (got == pid) return true;
    if (got < 0 && errno != EINTR) return true;  // not ours to wait for any more
    if (timeout >= 0 && Clock::now() >= deadline) return false;
    if (got == 0) ::usleep(10'000);
  }
}

int millis_until(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1000));
}

}  // namespace

std::vector<std::string> split_args(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

std::string relsim_exe() { return RELSIM_EXE; }
std::string source_dir() { return RELSIM_SOURCE_DIR; }

std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return "";
}

bool under_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

RunResult run_program(const std::vector<std::string>& argv, const RunOptions& options) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  make_pipe(in_pipe);
  make_pipe(out_pipe);
  make_pipe(err_pipe);
  const pid_t pid = spawn(argv, options, in_pipe[0], out_pipe[1], err_pipe[1]);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::signal(SIGPIPE, SIG_IGN);  // a child that stops reading its input must not kill the test
  int in_fd = in_pipe[1];
  ::fcntl(in_fd, F_SETFL, ::fcntl(in_fd, F_GETFL) | O_NONBLOCK);
  std::size_t written = 0;
  if (options.input.empty()) {
    ::close(in_fd);
    in_fd = -1;
  }
  RunResult run;
  auto deadline = after(options.timeout);
  bool killed = false;
  int out_fd = out_pipe[0], err_fd = err_pipe[0];
  char buf[65536];
  while (out_fd >= 0 || err_fd >= 0) {
    if (Clock::now() >= deadline) {
      if (killed) break;  // a grandchild still holds the pipes 5 s after the kill: stop reading
      kill_child(pid, options.new_process_group, SIGKILL);
      killed = true;
      deadline = after(5);
    }
    pollfd fds[3] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}, {in_fd, POLLOUT, 0}};
    if (::poll(fds, 3, millis_until(deadline)) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      int& fd = i == 0 ? out_fd : err_fd;
      if (fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? run.out : run.err).append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fd);
        fd = -1;
      }
    }
    if (in_fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t n = ::write(in_fd, options.input.data() + written, options.input.size() - written);
      if (n > 0) written += static_cast<std::size_t>(n);
      if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == options.input.size()) {
        ::close(in_fd);
        in_fd = -1;
      }
    }
  }
  for (int fd : {in_fd, out_fd, err_fd})
    if (fd >= 0) ::close(fd);
  int status = 0;
  if (!reap(pid, killed ? 5 : -1, &status)) {  // killed but not gone: once more, then wait for good
    kill_child(pid, options.new_process_group, SIGKILL);
    reap(pid, -1, &status);
  }
  const Decoded d = decode(status);
  run.code = d.code;
  run.signaled = d.signaled;
  return run;
}

namespace {

// Under sanitizers a relsim process costs about 0.2 s of CPU before main
// (ASan's and UBSan's start-up, most of it page faults on this machine;
// a Release one 0.02 s), which made the e2e label a third of the ASan run.
// There a command runs in-process instead (relsim::run_command: the very
// App, parsing, checks and output the command line has), under the same
// sanitizers and leak-checked when the test process ends; its stderr is
// what it wrote to std::cerr, and its failure line is written as the
// command line writes it. The Release run checks the process itself: its
// exit code, its streams, its start. A command keeps its process when the
// test gives it input, an environment, a folder or a process group, when it
// serves until a signal (it takes the signals over, cli/stop_signals.hpp),
// or when an argument is "-" (standard input).
bool in_process(const std::vector<std::string>& args, const RunOptions& o) {
  if (!kSanitized || args.empty()) return false;
  if (!o.input.empty() || !o.env.empty() || !o.cwd.empty() || o.new_process_group) return false;
  for (const char* serving : {"serve", "ui", "proxy", "tools", "bughunt"})
    if (args.front() == serving) return false;
  return std::find(args.begin(), args.end(), "-") == args.end();
}

RunResult run_in_process(const std::vector<std::string>& args) {
  std::ostringstream err;
  std::streambuf* const saved = std::cerr.rdbuf(err.rdbuf());
  const ui::CommandResult r = run_command(args);  // never throws
  std::cerr.rdbuf(saved);
  RunResult out;
  out.code = r.code;
  out.out = r.out;
  out.err = err.str() + r.notes;  // the lines saying why it exits 1 come last, as the command line writes them
  if (r.code == 2) out.err += "relsim: error: " + r.err + "\n";
  if (r.code == 3) out.err += "relsim: " + r.err + "\n";  // "internal error: ..."
  return out;
}

}  // namespace

RunResult run_relsim(const std::vector<std::string>& args, const RunOptions& options) {
  if (in_process(args, options)) return run_in_process(args);
  std::vector<std::string> argv{relsim_exe()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv, options);
}

RunResult run_relsim(const std::string& args, const RunOptions& options) { return run_relsim(split_args(args), options); }

Background::Background(const std::vector<std::string>& argv, const RunOptions& options)
    : group_(options.new_process_group) {
  int out_pipe[2];
  make_pipe(out_pipe);
  const int null_in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  try {
    pid_ = spawn(argv, options, null_in, out_pipe[1], -1);
  } catch (...) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    if (null_in >= 0) ::close(null_in);
    throw;
  }
  if (null_in >= 0) ::close(null_in);
  ::close(out_pipe[1]);
  out_fd_ = out_pipe[0];
}

Background::~Background() {
  if (!reaped_) {
    kill_child(pid_, group_, SIGTERM);
    int status = 0;
    if (!reap(pid_, 10, &status)) {
      kill_child(pid_, group_, SIGKILL);
      reap(pid_, -1, &status);
    }
  }
  if (out_fd_ >= 0) ::close(out_fd_);
}

bool Background::fill(double timeout) {
  if (out_fd_ < 0) return false;
  pollfd p{out_fd_, POLLIN, 0};
  const auto deadline = after(timeout);
  for (;;) {
    const int ready = ::poll(&p, 1, millis_until(deadline));
    if (ready < 0 && errno != EINTR) return false;
    if (ready > 0) break;
    if (Clock::now() >= deadline) return false;
  }
  char buf[4096];
  const ssize_t n = ::read(out_fd_, buf, sizeof buf);
  if (n > 0) {
    buffer_.append(buf, static_cast<std::size_t>(n));
    return true;
  }
  if (n < 0 && errno == EINTR) return true;
  ::close(out_fd_);
  out_fd_ = -1;
  return false;
}

std::string Background::read_line(double timeout) {
  const auto deadline = after(timeout);
  std::size_t newline;
  while ((newline = buffer_.find('\n')) == std::string::npos) {
    const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
    if (left <= 0 || !fill(left)) return "";
  }
  std::string line = buffer_.substr(0, newline);
  buffer_.erase(0, newline + 1);
  return line;
}

std::string Background::read_rest(double timeout) {
  const auto deadline = after(timeout);
  for (;;) {
    const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
    if (left <= 0 || !fill(left)) break;
  }
  std::string rest;
  rest.swap(buffer_);
  return rest;
}

int Background::stop(int signal) {
  if (!reaped_) kill_child(pid_, group_, signal);
  return wait();
}

int Background::wait() {
  if (!reaped_) {
    int status = 0;
    reap(pid_, -1, &status);
    const Decoded d = decode(status);
    code_ = d.code;
    signaled_ = d.signaled;
    reaped_ = true;
  }
  return code_;
}

int port_from_banner(const std::string& line) {
  const auto colon = line.rfind(':');
  if (colon == std::string::npos) return -1;
  const auto end = line.find_first_not_of("0123456789", colon + 1);
  const std::string digits = line.substr(colon + 1, end == std::string::npos ? std::string::npos : end - colon - 1);
  if (digits.empty() || digits.size() > 5) return -1;
  const int port = std::stoi(digits);
  return port >= 1 && port <= 65535 ? port : -1;
}

}  // namespace relsim::test
