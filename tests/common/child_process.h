// Child processes for end-to-end tests: cbtrain (or mpirun) with its output captured.
#pragma once
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/paths.h"

namespace cbt::test {

// A program started with fork/exec (cbtrain unless named); stdout and stderr go to a pipe
// read by read_until/finish. `env` entries ("NAME=value") are added to the environment.
class Child {
 public:
  explicit Child(const std::vector<std::string>& args) : Child(test::cbtrain_binary(), args) {}
  Child(const std::string& program, const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe");
    std::vector<std::string> argv_s = {program};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], 1);
      dup2(fds[1], 2);
      close(fds[0]);
      close(fds[1]);
      for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
      execvp(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    fd_ = fds[0];
  }
  ~Child() {
    if (fd_ >= 0) close(fd_);
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  void signal(int sig) { kill(pid_, sig); }
  pid_t pid() const { return pid_; }
  // Reads output until it matches `re` (true) or the child closes its output (false).
  bool read_until(const std::regex& re) {
    while (!std::regex_search(output_, re))
      if (!read_some()) return false;
    return true;
  }
  // Reads the rest of the output and waits: the exit code, or 128 + the signal that ended it.
  int finish() {
    while (read_some()) {
    }
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  const std::string& output() const { return output_; }

 private:
  bool read_some() {
    char buf[4096];
    ssize_t n;
    do n = read(fd_, buf, sizeof buf);
    while (n < 0 && errno == EINTR);
    if (n <= 0) return false;
    output_.append(buf, static_cast<size_t>(n));
    return true;
  }
  pid_t pid_ = -1;
  int fd_ = -1;
  bool reaped_ = false;
  std::string output_;
};

}  // namespace cbt::test
