#include "analyzer/cli/top_screen.h"

#define NCURSES_WIDECHAR 1
#include <curses.h>

#include <fmt/core.h>

#include <langinfo.h>

#include <algorithm>
#include <clocale>
#include <cstdlib>
#include <stdexcept>
#include <string_view>
#include <cwchar>
#include <vector>

namespace gpumemtrace::cli {

namespace {

std::vector<std::wstring> wide_lines(const std::string& text) {
  std::vector<std::wstring> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    std::wstring wide(line.size() + 1, L'\0');
    size_t n = std::mbstowcs(wide.data(), line.c_str(), wide.size());
    wide.resize(n == static_cast<size_t>(-1) ? 0 : n);  // the text is valid UTF-8 (terminal_text): never -1
    lines.push_back(std::move(wide));
    start = end + 1;
  }
  return lines;
}

}  // namespace

TopScreen::TopScreen() {
  // The frame is UTF-8 (names, µ, ×, ←): in a locale of another code set (C, over ssh without LANG) its characters
  // would not convert, so C.UTF-8 takes its place.
  std::setlocale(LC_ALL, "");
  if (std::string_view(nl_langinfo(CODESET)) != "UTF-8") std::setlocale(LC_CTYPE, "C.UTF-8");
  // newterm, unlike initscr, returns when $TERM names no terminal the system knows.
  screen_ = newterm(nullptr, stdout, stdin);
  if (!screen_) {
    const char* term = std::getenv("TERM");
    throw std::runtime_error(fmt::format("cannot draw on this terminal (TERM={}): give --once for text",
                                         term ? term : "unset"));
  }
  cbreak();
  noecho();
  keypad(stdscr, TRUE);
  curs_set(0);
}

TopScreen::~TopScreen() {
  endwin();
  delscreen(screen_);
}

void TopScreen::show(std::string frame, std::string status) {
  frame_ = std::move(frame);
  status_ = std::move(status);
  draw();
}

void TopScreen::draw() {
  std::vector<std::wstring> lines = wide_lines(frame_);
  int rows = std::max(LINES - 1, 1);  // the last is the status line
  first_line_ = std::clamp(first_line_, 0, std::max(0, static_cast<int>(lines.size()) - rows));
  erase();
  for (int row = 0; row < rows && first_line_ + row < static_cast<int>(lines.size()); ++row) {
    if (first_line_ + row == 0) attron(A_REVERSE);
    mvaddnwstr(row, 0, lines[static_cast<size_t>(first_line_ + row)].c_str(), COLS);
    if (first_line_ + row == 0) attroff(A_REVERSE);
  }
  std::vector<std::wstring> status = wide_lines(status_);
  attron(A_BOLD);
  if (!status.empty()) mvaddnwstr(LINES - 1, 0, status[0].c_str(), COLS);
  attroff(A_BOLD);
  refresh();
}

bool TopScreen::wait_for_quit(std::chrono::milliseconds period, const std::function<bool()>& stop) {
  auto deadline = std::chrono::steady_clock::now() + period;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    timeout(static_cast<int>(left.count()));
    int key = getch();
    if (stop()) return true;
    int page = std::max(LINES - 2, 1);
    switch (key) {
      case 'q':
      case 'Q':
        return true;
      case KEY_UP: first_line_ -= 1; break;
      case KEY_DOWN: first_line_ += 1; break;
      case KEY_PPAGE: first_line_ -= page; break;
      case KEY_NPAGE:
      case ' ': first_line_ += page; break;
      case KEY_HOME: first_line_ = 0; break;
      case KEY_RESIZE: break;
      default: continue;
    }
    draw();
  }
}

}  // namespace gpumemtrace::cli
