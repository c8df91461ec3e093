#include "support/run.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace relsim::test {
namespace {

int decode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Turns argv into the char* array execvp wants (valid while argv lives).
std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

[[noreturn]] void exec_child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                             const std::string& cwd) {
  for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
  if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) _exit(126);
  auto args = c_argv(argv);
  ::execvp(args[0], args.data());
  _exit(127);
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace

std::vector<std::string> split_args(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

std::string relsim_exe() { return RELSIM_EXE; }
std::string source_dir() { return RELSIM_SOURCE_DIR; }

bool under_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

Run run_program(const std::vector<std::string>& argv, const RunOptions& options) {
  if (argv.empty()) throw std::invalid_argument("run_program: empty argv");
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (::pipe(in_pipe) != 0 || ::pipe(out_pipe) != 0 || ::pipe(err_pipe) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::dup2(in_pipe[0], STDIN_FILENO);
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    exec_child(argv, options.env, options.cwd);
  }
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::signal(SIGPIPE, SIG_IGN);
  int in_fd = in_pipe[1];
  set_nonblocking(in_fd);
  std::size_t written = 0;
  if (options.input.empty()) {
    ::close(in_fd);
    in_fd = -1;
  }
  Run run;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options.timeout);
  bool killed = false;
  int out_fd = out_pipe[0], err_fd = err_pipe[0];
  char buf[65536];
  while (out_fd >= 0 || err_fd >= 0) {
    pollfd fds[3] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}, {in_fd, POLLOUT, 0}};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 && !killed) {
      ::kill(pid, SIGKILL);
      killed = true;
    }
    if (::poll(fds, 3, killed ? 1000 : static_cast<int>(std::min<long long>(left.count() + 1, 1000))) < 0 &&
        errno != EINTR)
      break;
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
      if (n < 0 || written == options.input.size()) {
        ::close(in_fd);
        in_fd = -1;
      }
    }
  }
  if (in_fd >= 0) ::close(in_fd);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.code = decode(status);
  return run;
}

Run run_relsim(const std::vector<std::string>& args, const RunOptions& options) {
  std::vector<std::string> argv{relsim_exe()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv, options);
}

Run run_relsim(const std::string& args, const RunOptions& options) { return run_relsim(split_args(args), options); }

Background::Background(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  int out_pipe[2];
  if (::pipe(out_pipe) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    exec_child(argv, env, {});
  }
  ::close(out_pipe[1]);
  out_ = ::fdopen(out_pipe[0], "r");
}

Background::~Background() {
  if (!reaped_) stop(SIGTERM);
  if (out_ != nullptr) std::fclose(out_);
}

std::string Background::read_line() {
  std::string line;
  for (int c; (c = std::fgetc(out_)) != EOF && c != '\n';) line += static_cast<char>(c);
  return line;
}

int Background::stop(int signal) {
  if (!reaped_) ::kill(pid_, signal);
  return wait();
}

int Background::wait() {
  if (!reaped_) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    status_ = decode(status);
    reaped_ = true;
  }
  return status_;
}

int port_from_banner(const std::string& line) {
  const auto colon = line.rfind(':');
  if (colon == std::string::npos) return -1;
  try {
    return std::stoi(line.substr(colon + 1));
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace relsim::test
