// The restricted pickle reader and writer (analyzer/pytorch/pickle_reader.h, pickle_writer.h): what
// Python's pickle writes in protocols 2 to 5 reads back as the same values, what the writer writes Python
// loads as the same values, opcodes that import or call code are refused by name and offset, and hostile
// input is bounded.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "analyzer/pytorch/pickle_reader.h"
#include "analyzer/pytorch/pickle_writer.h"
#include "analyzer/sources/pytorch/snapshot_trace.h"
#include "tests/analyzer/pytorch/python_pickle.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"

namespace gpumemtrace::test {
namespace {

using pytorch::Pickle;
using pytorch::PickleError;
using pytorch::PickleKind;
using pytorch::PickleValue;

// A value as Python's repr would show it, for plain data (dict keys in order).
std::string show(const Pickle& pickle, Pickle::Id id, int depth = 0) {
  const PickleValue& v = pickle[id];
  if (depth > 8) return "...";
  auto items = [&](std::string open, std::string close, std::string_view between = ", ") {
    std::string out = open;
    std::span<const Pickle::Id> all = pickle.items(v);
    for (size_t i = 0; i < all.size(); ++i) {
      if (i) out += v.kind == PickleKind::Dict && i % 2 ? ": " : between;
      out += show(pickle, all[i], depth + 1);
    }
    return out + (v.kind == PickleKind::Tuple && all.size() == 1 ? "," : "") + close;
  };
  switch (v.kind) {
    case PickleKind::None:
      return "None";
    case PickleKind::Bool:
      return v.payload ? "True" : "False";
    case PickleKind::Int:
      return (v.negative ? "-" : "") + std::to_string(v.payload);
    case PickleKind::BigInt:
      return "<big>";
    case PickleKind::Float:
      return std::to_string(pickle.real(v));
    case PickleKind::Str:
      return "'" + std::string(pickle.text(v)) + "'";
    case PickleKind::Bytes:
      return "b" + std::to_string(v.length);
    case PickleKind::List:
      return items("[", "]");
    case PickleKind::Tuple:
      return items("(", ")");
    case PickleKind::Dict:
      return items("{", "}");
  }
  return "?";
}

// Bytes only from protocol 3: protocol 2 writes them as a call of codecs.encode, for Python 2.
std::string plain_data(int protocol) {
  return std::string(
             "{'ints': [0, 255, 256, 65535, 65536, -1, -129, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**63 - 1, 2**64 - 1,"
             " -2**63, 2**64], 'float': [1.5, -0.25], 'text': ['µs', 'x' * 300], 'bytes': ") +
         (protocol >= 3 ? "b'\\x00\\x01'" : "None") +
         ", 'flags': (True, False, None), 'nested': {'t1': (1,), 't3': (1, 2, 3), 't4': (1, 2, 3, 4), 'empty': ((), "
         "[], {})}}";
}

constexpr const char* kPlainDataShown =
    "{'ints': [0, 255, 256, 65535, 65536, -1, -129, 2147483647, 2147483648, -2147483648, -2147483649, "
    "9223372036854775807, 18446744073709551615, -9223372036854775808, <big>], 'float': [1.500000, -0.250000], "
    "'text': ['µs', '";

class PythonWrites : public testing::TestWithParam<int> {};

TEST_P(PythonWrites, ThePlainDataReadsBack) {
  std::vector<uint8_t> bytes = python_pickle("v = " + plain_data(GetParam()), GetParam());
  ASSERT_TRUE(pytorch::looks_like_pickle(bytes));
  Pickle pickle(bytes);
  std::string shown = show(pickle, pickle.root());
  EXPECT_EQ(shown.substr(0, std::string(kPlainDataShown).size()), kPlainDataShown);
  EXPECT_NE(shown.find("'" + std::string(300, 'x') + "'], 'bytes': " + (GetParam() >= 3 ? "b2" : "None") +
                       ", 'flags': (True, False, None), "
                       "'nested': {'t1': (1,), 't3': (1, 2, 3), 't4': (1, 2, 3, 4), 'empty': ((), [], {})}}"),
            std::string::npos)
      << shown;
}

TEST_P(PythonWrites, ASharedObjectIsOneValue) {
  std::vector<uint8_t> bytes = python_pickle("v = (lambda shared: [shared, shared, {'again': shared}])([1, 2])", GetParam());
  Pickle pickle(bytes);
  std::span<const Pickle::Id> items = pickle.items(pickle[pickle.root()]);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0], items[1]);
  EXPECT_EQ(pickle.items(pickle[items[2]])[1], items[0]);
}

TEST_P(PythonWrites, AListThatHoldsItselfIsRead) {
  std::vector<uint8_t> bytes = python_pickle("v = (lambda l: (l.append(l), l)[1])([])", GetParam());
  Pickle pickle(bytes);
  EXPECT_EQ(pickle.items(pickle[pickle.root()])[0], pickle.root());
}

INSTANTIATE_TEST_SUITE_P(Protocols, PythonWrites, testing::Values(2, 3, 4, 5));

std::string refusal(std::vector<uint8_t> bytes) {
  try {
    Pickle pickle(bytes);
  } catch (const PickleError& error) {
    return error.what();
  }
  return "read";
}

TEST(PickleReader, RefusesEveryOpcodeThatImportsOrCallsCode) {
  struct Case {
    std::vector<uint8_t> bytes;
    std::string opcode;
  } cases[] = {
      {{0x80, 2, 'c', 'o', 's', '\n', 's', 'y', 's', 't', 'e', 'm', '\n', '.'}, "GLOBAL (0x63) at byte offset 2"},
      {{0x80, 4, 0x93, '.'}, "STACK_GLOBAL (0x93) at byte offset 2"},
      {{0x80, 2, 'N', ')', 'R', '.'}, "REDUCE (0x52) at byte offset 4"},
      {{0x80, 2, '}', '}', 'b', '.'}, "BUILD (0x62) at byte offset 4"},
      {{0x80, 2, '(', 'i', 'o', 's', '\n'}, "INST (0x69) at byte offset 3"},
      {{0x80, 2, '(', 'o', '.'}, "OBJ (0x6f) at byte offset 3"},
      {{0x80, 2, 'N', ')', 0x81, '.'}, "NEWOBJ (0x81) at byte offset 4"},
      {{0x80, 4, 'N', ')', '}', 0x92, '.'}, "NEWOBJ_EX (0x92) at byte offset 5"},
      {{0x80, 2, 0x82, 1, '.'}, "EXT1 (0x82) at byte offset 2"},
      {{0x80, 2, 0x83, 1, 0, '.'}, "EXT2 (0x83) at byte offset 2"},
      {{0x80, 2, 0x84, 1, 0, 0, 0, '.'}, "EXT4 (0x84) at byte offset 2"},
      {{0x80, 2, 'P', 'x', '\n', '.'}, "PERSID (0x50) at byte offset 2"},
      {{0x80, 2, 'N', 'Q', '.'}, "BINPERSID (0x51) at byte offset 3"},
  };
  for (const Case& c : cases) {
    std::string message = refusal(c.bytes);
    EXPECT_EQ(message, "pickle opcode " + c.opcode +
                           " imports or calls code; only plain data (dicts, lists, tuples, strings, numbers) is read");
  }
}

TEST(PickleReader, RefusesWhatSnapshotsDoNotUse) {
  EXPECT_EQ(refusal({0x80, 2, 'I', '1', '\n', '.'}),
            "pickle opcode INT (0x49) at byte offset 2 is not read (only the binary forms of plain data that protocols "
            "2 to 5 write)");
  EXPECT_NE(refusal({0x80, 5, 0x97, '.'}).find("NEXT_BUFFER (0x97)"), std::string::npos);
  EXPECT_NE(refusal({0x80, 4, 0x8f, '.'}).find("EMPTY_SET (0x8f)"), std::string::npos);
}

TEST(PickleReader, LengthsAreCheckedAgainstWhatRemains) {
  EXPECT_EQ(refusal({0x80, 4, 'X', 0xff, 0xff, 0xff, 0x7f, 'a'}),
            "the pickle is truncated: BINUNICODE at byte offset 2 needs 2147483647 bytes, 1 remain");
  EXPECT_EQ(refusal({0x80, 4, 0x8b, 0, 0, 0, 0x80}), "malformed pickle: LONG4 at byte offset 2 (negative length)");
  EXPECT_EQ(refusal({0x80, 4, 'h', 7, '.'}), "malformed pickle: BINGET at byte offset 2 (memo entry 7 was never stored)");
  EXPECT_EQ(refusal({0x80, 4, 'N', 'u', '.'}), "malformed pickle: SETITEMS at byte offset 3 (no MARK before it)");
  EXPECT_EQ(refusal({0x80, 4, ']', 'N', 's', '.'}), "malformed pickle: SETITEM at byte offset 4 (the stack is empty)");
  EXPECT_EQ(refusal({0x80, 4, ']', 'N', 'N', 's', '.'}),
            "malformed pickle: SETITEM at byte offset 5 (it adds to a list, not a dict)");
}

// Hostile nesting costs one value per opcode and no recursion: a million lists, each inside the next.
TEST(PickleReader, DeepNestingIsRead) {
  std::vector<uint8_t> bytes{0x80, 4};
  constexpr size_t kDepth = 1'000'000;
  for (size_t i = 0; i < kDepth; ++i) bytes.push_back(']');
  for (size_t i = 1; i < kDepth; ++i) bytes.push_back('a');
  bytes.push_back('.');
  Pickle pickle(bytes);
  EXPECT_EQ(pickle.size(), kDepth);
  EXPECT_EQ(pickle.total_items(), kDepth - 1);
}

// A snapshot that refers to one big blocks list from many segments would be walked again for each reference:
// the walk is bounded by the pickle's own size, and refuses.
TEST(PickleReader, ASnapshotThatSharesOneListEverywhereIsRefused) {
  std::vector<uint8_t> bytes = python_pickle(
      "v = (lambda seg: {'segments': [seg] * 1000})({'device': 0, 'address': 4096, 'total_size': 512, 'blocks': "
      "[{'size': 512, 'state': 'inactive'}] * 100000})",
      4);
  try {
    pytorch::snapshot_trace(bytes);
    FAIL() << "read";
  } catch (const std::exception& error) {
    EXPECT_NE(std::string(error.what()).find("refers to its shared parts too many times"), std::string::npos)
        << error.what();
  }
}

// What the writer writes, Python loads as the same value, with only the opcodes of MemoryViz.js's unpickler.
TEST(PickleWriter, PythonLoadsWhatItWrites) {
  std::string out;
  pytorch::PickleWriter w(out);
  w.begin_dict();
  w.str("ints");
  w.begin_list();
  for (int64_t v : {int64_t{0}, int64_t{255}, int64_t{256}, int64_t{65536}, int64_t{-1}, int64_t{1} << 31,
                    -(int64_t{1} << 40), INT64_MIN, INT64_MAX})
    w.integer(v);
  w.unsigned_integer(UINT64_MAX);
  w.end_list();
  w.str("text");
  w.str(std::string(300, 'y'));
  w.str("shared");
  w.begin_list();
  w.str("µs");
  w.end_list();
  uint32_t shared = w.memoize();
  w.str("again");
  w.get(shared);
  w.str("many");
  w.begin_list();
  for (int i = 0; i < 2500; ++i) w.integer(i);
  w.end_list();
  w.str("rest");
  w.begin_tuple();
  w.real(-0.25);
  w.boolean(true);
  w.boolean(false);
  w.none();
  w.end_tuple();
  w.end_dict();
  w.finish();

  ScratchDir scratch;
  std::string path = write_file(scratch / "written.pickle", std::vector<uint8_t>(out.begin(), out.end()));
  ProcessResult r = run_process({"python3", "-c", R"(
import pickle, pickletools, sys
data = open(sys.argv[1], 'rb').read()
v = pickle.loads(data)
assert v['again'] is v['shared']
assert v['many'] == list(range(2500))
print(v['ints'], len(v['text']), v['shared'], v['rest'])
memory_viz = {'PROTO', 'APPEND', 'APPENDS', 'LIST', 'TUPLE', 'NEWFALSE', 'NEWTRUE', 'NONE', 'BINGET', 'BININT',
              'BININT1', 'BININT2', 'EMPTY_DICT', 'EMPTY_LIST', 'FRAME', 'LONG1', 'LONG_BINGET', 'MARK', 'MEMOIZE',
              'BINPUT', 'LONG_BINPUT', 'SETITEMS', 'SETITEM', 'DICT', 'SHORT_BINUNICODE', 'BINUNICODE', 'STOP',
              'EMPTY_TUPLE', 'TUPLE1', 'TUPLE2', 'TUPLE3', 'BINFLOAT'}
print(sorted({op.name for op, _, _ in pickletools.genops(data)} - memory_viz), data[1])
)",
                                 path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "[0, 255, 256, 65536, -1, 2147483648, -1099511627776, -9223372036854775808, 9223372036854775807, "
            "18446744073709551615] 300 ['µs'] (-0.25, True, False, None)\n[] 4\n");

  Pickle pickle(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(out.data()), out.size()));
  EXPECT_EQ(show(pickle, pickle.items(pickle[pickle.root()])[1]),
            "[0, 255, 256, 65536, -1, 2147483648, -1099511627776, -9223372036854775808, 9223372036854775807, "
            "18446744073709551615]");
}

}  // namespace
}  // namespace gpumemtrace::test
