// Running the cbtrain binary from tests: through a pipe (stdout is not a terminal) or on a
// pseudo-terminal (stdout is one), collecting what it prints and its exit code.
#pragma once
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

#include "common/paths.h"

namespace cbt::test {

struct CliResult {
  int code = -1;       // exit status; -1 when ended by a signal
  int signal = 0;      // the signal that ended it, if one did
  std::string output;  // stdout and stderr together
};

// `args` is one shell-quoted string.
inline CliResult run_cli(const std::string& args) {
  std::string cmd = cbtrain_binary() + " " + args + " 2>&1";
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  int status = pclose(p);
  if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

// Runs cbtrain with `args` (one per element) on a new pseudo-terminal (forkpty).
inline CliResult run_cli_in_pty(const std::vector<std::string>& args) {
  CliResult r;
  const std::string bin = cbtrain_binary();
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(bin.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int master = -1;
  struct winsize ws = {};
  ws.ws_row = 40, ws.ws_col = 160;
  pid_t pid = forkpty(&master, nullptr, nullptr, &ws);
  if (pid < 0) return r;
  if (pid == 0) {
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  std::array<char, 4096> buf;
  for (;;) {
    ssize_t n = read(master, buf.data(), buf.size());
    if (n > 0) {
      r.output.append(buf.data(), static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;  // EIO once the child has exited and closed the terminal
  }
  close(master);
  int status = 0;
  waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace cbt::test
