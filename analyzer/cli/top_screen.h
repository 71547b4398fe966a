// `gpumemtrace top`'s screen, drawn with ncurses: a frame of text (render/live_renderers.h) shown from its first
// line, its first line highlighted, a status line at the bottom; the arrow and page keys scroll a frame taller
// than the terminal. Made once the terminal is known to be one; its destructor gives the terminal back.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

struct screen;  // ncurses' SCREEN

namespace gpumemtrace::cli {

class TopScreen {
 public:
  // Throws std::runtime_error when the terminal is not one ncurses knows.
  TopScreen();
  ~TopScreen();
  TopScreen(const TopScreen&) = delete;
  TopScreen& operator=(const TopScreen&) = delete;

  void show(std::string frame, std::string status);
  // Waits `period` for keys, scrolling and redrawing on resize meanwhile. True when q was pressed or `stop`
  // (asked after each key or interruption) says so.
  bool wait_for_quit(std::chrono::milliseconds period, const std::function<bool()>& stop);

 private:
  void draw();

  ::screen* screen_ = nullptr;
  std::string frame_;
  std::string status_;
  int first_line_ = 0;  // the frame's line at the top of the screen
};

}  // namespace gpumemtrace::cli
