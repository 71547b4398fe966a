// A trace made in memory (trace/writer/trace_buffer.h): kept in a vector, or moved on to a memory file a MiB at
// a time; both hold the same bytes, and the reader reads them as the events written.
#include "trace/writer/trace_buffer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "trace/reader/opened_trace.h"
#include "trace/reader/reader.h"

namespace gpumemtrace::test {
namespace {

constexpr uint64_t kEvents = 250000;  // about 3.3 MiB of records: spilled three times and a rest

void write_events(writer::TraceBuffer& buffer) {
  for (uint64_t i = 0; i < kEvents; ++i)
    buffer.write(trace::SubAlloc{{i * 1000, 0}, 1, 0x10000000 + i * 4096, 512 + i % 7, 0, 0});
}

TEST(TraceBuffer, AMemoryFileHoldsTheBytesTheVectorWould) {
  writer::TraceBuffer in_memory, spilled;
  spilled.spill_to_memory_file();
  write_events(in_memory);
  write_events(spilled);
  std::vector<uint8_t> expected = in_memory.take();
  ASSERT_GT(expected.size(), 3u << 20);
  auto file = std::make_shared<const trace::OpenedTrace>(spilled.take_memory_file());
  std::unique_ptr<trace::MappedFile> mapped = file->map();
  std::span<const uint8_t> bytes = mapped->bytes();
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), expected.begin(), expected.end()));
  trace::Reader reader(file->map());
  uint64_t events = 0, last_address = 0;
  while (const trace::Record* record = reader.next())
    if (const auto* alloc = std::get_if<trace::SubAlloc>(record)) {
      ++events;
      last_address = alloc->address;
    }
  EXPECT_EQ(events, kEvents);
  EXPECT_EQ(last_address, 0x10000000 + (kEvents - 1) * 4096);
  EXPECT_EQ(reader.time_ns(), (kEvents - 1) * 1000);
}

}  // namespace
}  // namespace gpumemtrace::test
