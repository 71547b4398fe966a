// The streamed reading of a snapshot's history (analyzer/pytorch/pickle_reader.h, PickleListSink; snapshot.h):
// the values of a list's items are forgotten batch by batch, so that what the pickle holds does not grow with
// the items; what the memo or the sink keeps stays, renumbered; a batch that an older container refers into is
// not forgotten; and SnapshotReader gives the same snapshot, frames included, or the same error, as the
// reading of the whole pickle, on the real snapshots, on Python's pickles of every protocol and on the fuzz
// corpus.
#include <gtest/gtest.h>

#include <algorithm>

#include <filesystem>
#include <string>
#include <fmt/format.h>

#include "analyzer/pytorch/pickle_reader.h"
#include "analyzer/pytorch/snapshot.h"
#include "tests/analyzer/pytorch/python_pickle.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"

namespace gpumemtrace::test {
namespace {

using pytorch::Pickle;
using pytorch::PickleKind;

std::vector<uint8_t> bytes_of(const std::string& text) { return {text.begin(), text.end()}; }

// Takes the items of the list under the key "rows", and keeps the first item of each row's "keep" list.
class RowSink : public pytorch::PickleListSink {
 public:
  bool takes(const Pickle& pickle, std::span<const Id> below, Id) override {
    return !below.empty() && pickle[below.back()].kind == PickleKind::Str && pickle.text(pickle[below.back()]) == "rows";
  }
  void take(const Pickle& pickle, Id, Id item, std::vector<Id>& keep) override {
    std::span<const Id> fields = pickle.items(pickle[item]);
    for (size_t i = 0; i + 1 < fields.size(); i += 2) {
      std::string_view key = pickle.text(pickle[fields[i]]);
      if (key == "a") values.push_back(pickle[fields[i + 1]].payload);
      if (key == "keep") {
        kept.push_back(fields[i + 1]);
        keep.push_back(fields[i + 1]);
      }
    }
  }
  void renumber(Id first, std::span<const Id> renumbered) override {
    for (Id& id : kept)
      if (id >= first) id = renumbered[id - first];
  }
  std::vector<uint64_t> values;  // each row's "a"
  std::vector<Id> kept;          // each row's "keep"
};

TEST(PickleStream, WhatTheItemsUsedIsForgottenSoThePickleDoesNotGrowWithThem) {
  for (int protocol = 2; protocol <= 5; ++protocol) {
    SCOPED_TRACE(protocol);
    std::vector<size_t> held;
    for (int rows : {10, 5000}) {
      std::vector<uint8_t> bytes = python_pickle(
          fmt::format("v = {{'head': [1, 2], 'rows': [{{'a': i, 'b': 'x'}} for i in range({})]}}", rows), protocol);
      RowSink sink;
      Pickle pickle(bytes, &sink);
      ASSERT_EQ(sink.values.size(), static_cast<size_t>(rows));
      for (int i = 0; i < rows; ++i) ASSERT_EQ(sink.values[static_cast<size_t>(i)], static_cast<uint64_t>(i));
      // The root, 'head', its list and its two ints, 'rows' and its (empty) list; and what the memo keeps of the
      // rows: 'a', 'b' and 'x', which Python writes once and refers to again.
      EXPECT_EQ(pickle.size(), 10u);
      EXPECT_GT(pickle.total_values(), static_cast<uint64_t>(2 * rows));
      held.push_back(pickle.size());
    }
    EXPECT_EQ(held[0], held[1]);
  }
}

// Each row's own list, which the sink keeps, is renumbered with what it holds; a list shared by all rows too.
TEST(PickleStream, WhatTheSinkKeepsIsRenumbered) {
  std::vector<uint8_t> bytes = python_pickle(
      "shared = ['s']\n"
      "v = {'rows': [{'a': i, 'keep': [i, 'f%d' % i] if i % 2 else shared} for i in range(2500)]}",
      4);
  RowSink sink;
  Pickle pickle(bytes, &sink);
  ASSERT_EQ(sink.values.size(), 2500u);
  ASSERT_EQ(sink.kept.size(), 2500u);
  for (size_t i = 0; i < sink.kept.size(); ++i) {
    std::span<const Pickle::Id> list = pickle.items(pickle[sink.kept[i]]);
    if (i % 2) {
      ASSERT_EQ(list.size(), 2u) << i;
      EXPECT_EQ(pickle[list[0]].payload, i);
      EXPECT_EQ(pickle.text(pickle[list[1]]), fmt::format("f{}", i));
    } else {
      ASSERT_EQ(list.size(), 1u) << i;
      EXPECT_EQ(pickle.text(pickle[list[0]]), "s");
    }
  }
}

TEST(PickleStream, AForgottenItemReferredToAgainIsAnErrorThatTheWholeReadingDoesNotHave) {
  std::vector<uint8_t> bytes = python_pickle("rows = [{'a': 1}, {'a': 2}]\nv = {'rows': rows, 'again': rows[0]}", 4);
  RowSink sink;
  try {
    Pickle pickle(bytes, &sink);
    ADD_FAILURE() << "read";
  } catch (const pytorch::PickleError& error) {
    EXPECT_NE(std::string(error.what()).find("memo entry 3 refers to a value already forgotten"), std::string::npos)
        << error.what();
  }
  Pickle whole(bytes);
  EXPECT_EQ(whole[whole.root()].kind, PickleKind::Dict);
}

// A batch inside which an older list is appended to is taken, not forgotten: the older list keeps what it holds.
TEST(PickleStream, ABatchAnOlderContainerRefersIntoIsNotForgotten) {
  using namespace std::string_literals;
  const std::string text =
      "\x80\x04}("                      // PROTO 4, the root dict, MARK
      "\x8c\x01x]\x94"                  // 'x': [] (memo 0)
      "\x8c\x04rows]("                  // 'rows': [ MARK
      "}(\x8c\x01" "aK\x01"             //   {MARK 'a': 1,
      "\x8c\x01" "bh\x00]a"             //    'b': memo 0, with [] appended to it
      "u"                               //   SETITEMS}
      "}(\x8c\x01" "aK\x02u"            //   {'a': 2}
      "eu."s;                           // APPENDS, SETITEMS, STOP
  std::vector<uint8_t> bytes = bytes_of(text);
  RowSink sink;
  Pickle pickle(bytes, &sink);
  EXPECT_EQ(sink.values, (std::vector<uint64_t>{1, 2}));
  std::span<const Pickle::Id> root = pickle.items(pickle[pickle.root()]);
  ASSERT_EQ(root.size(), 4u);
  std::span<const Pickle::Id> x = pickle.items(pickle[root[1]]);
  ASSERT_EQ(x.size(), 1u);
  EXPECT_EQ(pickle[x[0]].kind, PickleKind::List);
  EXPECT_TRUE(pickle.items(pickle[x[0]]).empty());
  EXPECT_TRUE(pickle.items(pickle[root[3]]).empty()) << "the rows went to the sink";
}

// Everything a report reads of a snapshot, frames resolved, or the error.
std::string described(pytorch::SnapshotReader& reader) {
  std::string out;
  try {
    pytorch::Snapshot s = reader.read();
    auto frames = [&](pytorch::FramesId id) {
      std::string text;
      if (id == pytorch::kNoFrames) return text;
      for (const pytorch::SnapshotFrame& f : reader.frames(id)) text += fmt::format(" {}:{}:{}", f.filename, f.line, f.name);
      return text;
    };
    out += fmt::format("legacy {} unknown {} settings {}\n", s.legacy, s.unknown_actions, s.settings.has_value());
    for (const pytorch::SnapshotSegment& g : s.segments) {
      out += fmt::format("segment {} {} {} {} {} {}{}\n", g.device, g.address, g.total_size, g.stream, g.large_pool,
                         g.expandable, frames(g.frames));
      for (const pytorch::SnapshotBlock& b : g.blocks)
        out += fmt::format(" block {} {} {} {} {}{}\n", b.address, b.size, b.requested, static_cast<int>(b.state),
                           b.user_metadata, frames(b.frames));
    }
    for (size_t device = 0; device < s.device_traces.size(); ++device)
      for (const pytorch::SnapshotEntry& e : s.device_traces[device])
        out += fmt::format("entry {} {} {} {} {} {} {} {}{}\n", device, static_cast<int>(e.action), e.address, e.size,
                           e.device_free, e.stream, e.time_us.value_or(0), e.user_metadata, frames(e.frames));
  } catch (const pytorch::PickleError& error) {
    out += fmt::format("pickle error: {}\n", error.what());
  } catch (const pytorch::SnapshotError& error) {
    out += fmt::format("snapshot error: {}\n", error.what());
  }
  return out;
}

void expect_streamed_as_whole(const std::vector<uint8_t>& bytes, size_t min_entries = 0) {
  pytorch::SnapshotReader streamed(bytes);
  std::string by_stream = described(streamed);
  std::string whole;
  try {
    Pickle pickle(bytes);
    pytorch::SnapshotReader reader(pickle);
    whole = described(reader);
  } catch (const pytorch::PickleError& error) {
    whole = fmt::format("pickle error: {}\n", error.what());
  }
  EXPECT_EQ(by_stream, whole);
  size_t entries = 0;
  for (size_t at = by_stream.find("\nentry "); at != std::string::npos; at = by_stream.find("\nentry ", at + 1)) ++entries;
  EXPECT_GE(entries, min_entries);
}

TEST(SnapshotStream, RealSnapshotsReadAsWhole) {
  for (const char* name : {"yiyi_oom_snapshot", "yiyi_1.3b_snapshot", "silmont_mem_snapshot",
                           "silmont_memory_forward_bf16_128", "magma27_memory_snapshot"}) {
    SCOPED_TRACE(name);
    expect_streamed_as_whole(bytes_of(read_file(test_data_dir() + "/pytorch-snapshots/" + name + ".pickle")));
  }
}

// Python's pickles of a snapshot whose entries share their frames lists (as PyTorch's free entries share their
// alloc's), in every protocol; one that refers to an entry again, and one whose device_traces is not the list
// that followed its key, are read again whole.
TEST(SnapshotStream, PythonPicklesOfEveryProtocolReadAsWhole) {
  const std::string snapshot =
      "frames = [[{'filename': 'f%d.py' % k, 'line': k, 'name': 'g'}] for k in range(7)]\n"
      "entries = [[{'action': ['alloc', 'free_requested', 'free_completed', 'nonsense'][i % 4], 'addr': 512 * i,\n"
      "             'size': 512, 'stream': 0, 'time_us': 1000 + i, 'frames': frames[i % 7]} for i in range(n)]\n"
      "           for n in (2600, 3)]\n"
      "v = {'segments': [{'device': 0, 'address': 0, 'total_size': 1 << 20, 'stream': 0, 'segment_type': 'large',\n"
      "                   'frames': frames[0], 'blocks': [{'size': 1 << 20, 'state': 'inactive'}]}],\n"
      "     'device_traces': entries}\n";
  for (int protocol = 2; protocol <= 5; ++protocol) {
    SCOPED_TRACE(protocol);
    expect_streamed_as_whole(python_pickle(snapshot, protocol), 1950 + 3);
  }
  expect_streamed_as_whole(python_pickle(snapshot + "v['again'] = entries[0][5]", 4), 1953);
  expect_streamed_as_whole(python_pickle(snapshot + "v['device_traces'] = [entries[1]]\nv['other'] = entries", 4), 3);
  expect_streamed_as_whole(python_pickle(snapshot + "v['device_traces'] = [entries[0], entries[0]]", 4), 2 * 1950);
  expect_streamed_as_whole(python_pickle(snapshot + "entries[0][5]['size'] = -1", 4));
  // An entry whose frames are its own history list, or the list of them still being written (the fuzzer's): the
  // frames are what the whole pickle has, not what the list held when the entry was read.
  expect_streamed_as_whole(python_pickle(snapshot + "entries[0][0]['frames'] = entries[0]", 4), 1953);
  expect_streamed_as_whole(python_pickle(snapshot + "entries[0][0]['frames'] = entries", 4));  // lists, not frames
  // Frames of their own in each entry, as PyTorch writes them: the entry's dict grows after its frames list was
  // made, and moves past it in the pickle's items.
  expect_streamed_as_whole(
      python_pickle(snapshot + "for n, e in enumerate(entries[0]): e['frames'] = [{'filename': 'h.py', 'line': n, "
                               "'name': 'g%d' % (n % 3)}, {'filename': 'c10.cpp', 'line': 0, 'name': 'at::empty'}]",
                    4),
      1953);
}

// A field of the wrong kind is named by where it is, streamed or not (the walk's steps are a chain through the
// stack, read only for the message).
TEST(SnapshotStream, AWrongFieldIsNamedByWhereItIs) {
  const std::string snapshot =
      "v = {'segments': [{'device': 0, 'address': 0, 'total_size': 1 << 20, 'stream': 0, 'segment_type': 'large',\n"
      "                   'blocks': [{'size': 512, 'state': 'active_allocated'}, {'size': 512, 'state': 'inactive'}]}],\n"
      "     'device_traces': [[{'action': 'alloc', 'addr': 512 * i, 'size': 512, 'stream': 0, 'time_us': i}\n"
      "                        for i in range(1500)]]}\n";
  struct Case {
    std::string change, message;
  } cases[] = {
      {"v['segments'][0]['blocks'][1]['size'] = 'big'",
       "not a PyTorch memory snapshot: segments[0].blocks[1].size is a str, not a non-negative integer"},
      {"v['segments'][0]['blocks'][1]['state'] = 'gone'",
       "not a PyTorch memory snapshot: segments[0].blocks[1].state is 'gone', not a block state"},
      {"del v['segments'][0]['blocks'][0]['size']", "not a PyTorch memory snapshot: segments[0].blocks[0] has no 'size'"},
      {"v['device_traces'][0][1200]['addr'] = -512",
       "not a PyTorch memory snapshot: device_traces[0][1200].addr is a int, not a non-negative integer"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.change);
    std::vector<uint8_t> bytes = python_pickle(snapshot + c.change, 4);
    pytorch::SnapshotReader streamed(bytes);
    EXPECT_EQ(described(streamed), "snapshot error: " + c.message + "\n");
    expect_streamed_as_whole(bytes);
  }
}

// While the history streams, the reader says after each batch of entries how far it has read, so that the
// pages of a mapped pickle behind it can go (sources/trace_source.cpp): 2600 entries, three batches.
TEST(SnapshotStream, TheReaderSaysHowFarItHasReadAfterEachBatch) {
  std::vector<uint8_t> bytes = python_pickle(
      "v = {'segments': [], 'device_traces': [[{'action': 'alloc', 'addr': 512 * i, 'size': 512, 'stream': 0,\n"
      "                                         'time_us': 1000 + i} for i in range(2600)]]}\n",
      4);
  std::vector<uint64_t> offsets;
  pytorch::SnapshotReader reader(bytes, [&](uint64_t offset) { offsets.push_back(offset); });
  pytorch::Snapshot snapshot = reader.read();
  ASSERT_EQ(snapshot.device_traces.size(), 1u);
  EXPECT_EQ(snapshot.device_traces[0].size(), 2600u);
  EXPECT_EQ(*snapshot.device_traces[0].back().time_us, 3599u);
  ASSERT_EQ(offsets.size(), 3u);
  EXPECT_TRUE(std::is_sorted(offsets.begin(), offsets.end()));
  EXPECT_GT(offsets.front(), 0u);
  EXPECT_LT(offsets.back(), bytes.size());
  EXPECT_GT(offsets.back(), bytes.size() * 9 / 10) << "the last batch ends near the end of the pickle";
}

TEST(SnapshotStream, TheFuzzCorpusReadsAsWhole) {
  std::filesystem::path corpus = std::filesystem::path(test_data_dir()) / "../fuzz/corpus/fuzz_snapshot_reader";
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
    SCOPED_TRACE(entry.path().string());
    expect_streamed_as_whole(bytes_of(read_file(entry.path().string())));
    ++files;
  }
  EXPECT_GE(files, 10u);
}

}  // namespace
}  // namespace gpumemtrace::test
