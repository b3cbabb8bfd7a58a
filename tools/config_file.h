// The resolved configuration of a run as a TOML file that `cbtrain --config FILE` reads back.
#pragma once
#include <CLI/CLI.hpp>
#include <map>
#include <string>

namespace cbt::cli {

// Every configurable option of `app` itself (not of its sub-commands), given or default, one
// `name = value` line each in CLI11's config syntax; `overrides` replace values by name
// (already formatted, e.g. {"learners", "\"4\""}).
std::string config_toml(const CLI::App& app, const std::map<std::string, std::string>& overrides);

}  // namespace cbt::cli
