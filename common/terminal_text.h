// Text from a trace or a file on its way to a terminal or a text report: names of phases, heaps, functions,
// files and modules, command lines, paths. A name can hold any bytes, and control characters written raw
// would drive the terminal (set its title, clear the screen, OSC 52 to the clipboard) or forge report lines.
// Every text output prints such strings through these: control characters (C0 and DEL: \n \t \r, else
// \x1b; C1, U+0080 to U+009F: \u009b) and bytes that are not UTF-8 (\xff) are shown escaped; any other
// UTF-8 text stays as it is.
#pragma once

#include <string>
#include <string_view>

namespace gpumemtrace {

// Appends the text escaped; `quoted` also escapes '"' and '\' and puts the text between quotes (dump's fields).
void append_terminal_text(std::string& out, std::string_view text, bool quoted = false);

inline std::string terminal_text(std::string_view text) {
  std::string out;
  append_terminal_text(out, text);
  return out;
}

// "\"name\"": as dump prints a string field.
inline std::string quoted_terminal_text(std::string_view text) {
  std::string out;
  append_terminal_text(out, text, true);
  return out;
}

}  // namespace gpumemtrace
