// Error tiers: UserError for bad input (exit code 2), InternalError for bugs (CBT_CHECK).
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace cbt {

// Bad user input: a model, a data file, a flag. The CLI prints what() and exits with 2.
class UserError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A model that cannot be imported or trained; the message names the file/node.
class ModelError : public UserError {
 public:
  using UserError::UserError;
};

// A broken invariant inside cbtrain (a bug), or a failed library/driver call.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

namespace detail {
[[noreturn]] void throw_internal(const char* expr, const char* file, int line, const std::string& msg);
template <class... Args>
std::string concat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
}  // namespace detail

}  // namespace cbt

// Checks an invariant; on failure throws InternalError naming expression, file and line.
#define CBT_CHECK(cond, ...)                                                                                   \
  do {                                                                                                         \
    if (!(cond)) ::cbt::detail::throw_internal(#cond, __FILE__, __LINE__, ::cbt::detail::concat(__VA_ARGS__)); \
  } while (0)

// Throws ModelError with the concatenated message (for invalid models).
#define CBT_MODEL_CHECK(cond, ...)                                            \
  do {                                                                        \
    if (!(cond)) throw ::cbt::ModelError(::cbt::detail::concat(__VA_ARGS__)); \
  } while (0)
