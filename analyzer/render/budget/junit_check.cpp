// JUnit XML as Jenkins (junit and xunit plugins) and GitLab read it: <testsuites> with one <testsuite>,
// one <testcase> per check of each rank and device; a failed one holds a <failure> whose message is the
// check's line and whose text lists the stacks. tests/data/junit/junit.xsd holds the constraints.
#include "analyzer/render/budget/budget_output.h"
#include "common/utf8.h"

namespace gpumemtrace::render {

namespace {

// Text for an XML attribute, or element text (where a newline stays a newline): markup characters escaped;
// bytes that are not UTF-8 (common/utf8.h), and the characters XML 1.0 cannot carry (control characters
// other than tab and newline, U+FFFE, U+FFFF) become U+FFFD.
std::string xml_escaped(std::string_view raw, bool element_text = false) {
  constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  std::string text = valid_utf8(raw), out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\n': out += element_text ? "\n" : "&#10;"; break;
      case '\t': out += "&#9;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += kReplacement;
        } else if (std::string_view(text).substr(i, 2) == "\xEF\xBF" && i + 2 < text.size() &&
                   (text[i + 2] == '\xBE' || text[i + 2] == '\xBF')) {
          out += kReplacement;  // U+FFFE, U+FFFF
          i += 2;
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string test_name(const report::CheckResult& result) {
  std::string name(report::check_name(result.kind));
  if (result.device) name += fmt::format(" device {}", *result.device);
  return name;
}

}  // namespace

void junit_check(const report::CheckModel& model, fmt::memory_buffer& out) {
  auto to = fmt::appender(out);
  size_t tests = model.results.size(), failures = model.failures();
  fmt::format_to(to, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fmt::format_to(to, "<testsuites name=\"gpumemtrace check\" tests=\"{}\" failures=\"{}\" errors=\"0\">\n", tests, failures);
  fmt::format_to(to, "  <testsuite name=\"gpumemtrace check\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\">\n",
                 tests, failures);
  for (const report::CheckResult& result : model.results) {
    std::string classname = "gpumemtrace." + (result.rank.empty() ? std::string("process") : result.rank);
    for (char& c : classname)
      if (c == ' ') c = '_';
    fmt::format_to(to, "    <testcase name=\"{}\" classname=\"{}\" time=\"0\"", xml_escaped(test_name(result)),
                   xml_escaped(classname));
    if (result.passed) {
      fmt::format_to(to, "/>\n");
      continue;
    }
    fmt::format_to(to, ">\n      <failure type=\"{}\" message=\"{}\">", report::check_name(result.kind),
                   xml_escaped(check_message(result)));
    std::string text = check_message(result) + "\n";
    if (!result.source.empty()) text += "trace: " + result.source + "\n";
    if (!result.stacks.empty()) text += "stacks that grew most at the peak:\n";
    for (const report::StackChange& stack : result.stacks) text += "  " + signed_size(stack.delta()) + "  " + stack.stack + "\n";
    fmt::format_to(to, "{}</failure>\n    </testcase>\n", xml_escaped(text, true));
  }
  fmt::format_to(to, "  </testsuite>\n</testsuites>\n");
}

}  // namespace gpumemtrace::render
