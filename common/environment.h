// The environment of a child process: this process's own, with changes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpumemtrace {

// A value sets the variable, nullopt removes it.
using EnvChanges = std::map<std::string, std::optional<std::string>>;

// This process's environment with the changes applied, as NAME=value strings.
std::vector<std::string> environment_with(const EnvChanges& changes);

// Pointers to the strings' characters, ending in nullptr: argv and envp for exec and posix_spawn.
std::vector<char*> c_strings(std::vector<std::string>& strings);

}  // namespace gpumemtrace
