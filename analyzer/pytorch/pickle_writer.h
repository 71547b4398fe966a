// Writes plain data as a Python pickle of protocol 4, with the opcodes Python's own pickler uses for it
// and nothing else: EMPTY_DICT/EMPTY_LIST with MARK and SETITEMS/APPENDS in batches of 1000, BININT1/
// BININT2/BININT and LONG1, BINFLOAT, SHORT_BINUNICODE/BINUNICODE, NEWTRUE/NEWFALSE, NONE, MARK+TUPLE,
// MEMOIZE and BINGET/LONG_BINGET, STOP (no FRAME: framing is optional). PyTorch's memory viewer
// (MemoryViz.js) has its own small unpickler that reads these. Values are written in order; a container's items go between its
// begin and end, a dict's as key, value, key, value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpumemtrace::pytorch {

class PickleWriter {
 public:
  // Appends to `out`, starting with PROTO 4; the caller may take what is written so far out of `out`
  // between values.
  explicit PickleWriter(std::string& out);

  void none();
  void boolean(bool value);
  void integer(int64_t value);
  void unsigned_integer(uint64_t value);
  void real(double value);
  void str(std::string_view text);  // bytes that are not UTF-8 become U+FFFD (common/utf8.h)

  void begin_dict();
  void end_dict();
  void begin_list();
  void end_list();
  void begin_tuple();
  void end_tuple();

  // Keeps the value just written in the memo: a later get(index) refers to the same object.
  uint32_t memoize();
  void get(uint32_t index);

  // Ends the pickle (STOP). Every container must be closed.
  void finish();

 private:
  enum class Container : uint8_t { Dict, List, Tuple };
  struct Open {
    Container kind;
    uint32_t items = 0;  // since its last batch
  };
  void item();  // a value starts: counted in its container, whose batch may end first
  void op(uint8_t code) { out_.push_back(static_cast<char>(code)); }
  void little_endian(uint64_t value, int bytes);

  std::string& out_;
  std::vector<Open> open_;
  uint32_t memo_size_ = 0;
};

}  // namespace gpumemtrace::pytorch
