// Writing the resolved configuration with CLI11's own value formatting, so that its config
// reader parses every value back to what this run used.
#include "tools/config_file.h"

#include <sstream>

namespace cbt::cli {

std::string config_toml(const CLI::App& app, const std::map<std::string, std::string>& overrides) {
  std::ostringstream out;
  out << "# cbtrain configuration: `cbtrain --config THIS_FILE` repeats the run;\n"
      << "# flags given on the command line override values here.\n";
  for (const CLI::Option* opt : app.get_options({})) {
    if (!opt->get_configurable()) continue;
    const std::string name = opt->get_single_name();
    if (name == "help" || name == "version") continue;
    std::string value = CLI::detail::ini_join(opt->reduced_results(), ',', '[', ']', '"', '\'');
    if (value.empty()) {
      if (!opt->get_default_str().empty())
        value = CLI::detail::convert_arg_for_ini(opt->get_default_str(), '"', '\'');
      else if (opt->get_expected_min() == 0)
        value = "false";  // a flag not given
      else
        continue;  // no value and no default: the program's own default applies
    }
    auto it = overrides.find(name);
    if (it != overrides.end()) value = it->second;
    out << name << " = " << value << "\n";
  }
  return out.str();
}

}  // namespace cbt::cli
