// CLI11 checks of numeric flags with messages that name the rule and the value. CLI11's
// PositiveNumber and NonNegativeNumber print the whole range of a double ("not in range 0.000000
// to 1797693134862315708…"), and they, like Range, let "nan" through (every comparison with NaN
// is false); a value such as 1e39 becomes inf in a float. A value that is not a number passes
// these checks and is refused by the option's own conversion.
#pragma once
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <string>
#include <type_traits>

namespace cbt::cli {

namespace detail {

// The value as a T, or nothing when it does not start with a number.
template <typename T>
bool parse_number(const std::string& value, T& out) {
  const char* begin = value.c_str();
  char* end = nullptr;
  if constexpr (std::is_same_v<T, float>)
    out = std::strtof(begin, &end);
  else
    out = std::strtod(begin, &end);
  return end != begin;
}

// More than 0, or 0 too when `zero_allowed`; refused values (NaN among them) get `rule`.
inline CLI::Validator above_zero(bool zero_allowed, const std::string& rule, const std::string& help) {
  return CLI::Validator(
      [zero_allowed, rule](std::string& value) -> std::string {
        double v = 0;
        if (!parse_number(value, v) || v > 0 || (zero_allowed && v == 0)) return {};
        return rule + ", not " + value;
      },
      help);
}

}  // namespace detail

// A finite number of the flag's own type (float or double).
template <typename T>
CLI::Validator finite_number() {
  static_assert(std::is_floating_point_v<T>);
  return CLI::Validator(
      [](std::string& value) -> std::string {
        T v{};
        if (!detail::parse_number(value, v) || std::isfinite(v)) return {};
        return std::string(std::is_same_v<T, float> ? "must be a finite number within a float's range"
                                                    : "must be a finite number") +
               ", not " + value;
      },
      "");
}

// CLI11 turns an empty value of a numeric option into 0 and runs no check on it: `--epochs ""`
// or `epochs =` in a --config file trained for 0 epochs and exited 0. The message for the
// first numeric option of `app` or its parsed sub-commands given an empty value ("--epochs was
// given an empty value; it takes a number"), or "" when there is none.
inline std::string empty_number_message(const CLI::App& app) {
  for (const CLI::Option* o : app.get_options()) {
    if (o->count() == 0 || o->get_items_expected_max() == 0) continue;  // flags take no value
    const std::string type = o->get_type_name();
    const bool numeric = type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0 || type.rfind("FLOAT", 0) == 0 ||
                         type.rfind("NUMBER", 0) == 0;
    if (!numeric) continue;
    for (const std::string& r : o->results())
      if (r.empty()) return o->get_name() + " was given an empty value; it takes a number";
  }
  for (const CLI::App* sub : app.get_subcommands(nullptr))
    if (std::string m = empty_number_message(*sub); !m.empty()) return m;
  return {};
}

// More than 0 (counts, rates, seconds); the help shows POSITIVE, as CLI11's own check.
inline CLI::Validator positive_number() { return detail::above_zero(false, "must be more than 0", "POSITIVE"); }

// 0 or more; the help shows NONNEGATIVE, as CLI11's own check.
inline CLI::Validator non_negative_number() { return detail::above_zero(true, "must be 0 or more", "NONNEGATIVE"); }

}  // namespace cbt::cli
