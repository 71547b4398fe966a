#include "analyzer/sources/trace_source.h"

#include "analyzer/pytorch/pickle_reader.h"
#include "analyzer/pytorch/snapshot.h"
#include "trace/reader/mapped_file.h"

namespace gpumemtrace::sources {

namespace {

// Throws OpenError when the file cannot be read (a FIFO: at once, never blocking).
bool starts_as_pickle(const std::string& path) {
  trace::MappedFile file(path);
  return file.bytes().size() >= 2 && pytorch::looks_like_pickle(file.bytes().first(2));
}

// A reader with the bytes it reads.
struct BufferReader {
  explicit BufferReader(std::shared_ptr<const std::vector<uint8_t>> trace) : bytes(std::move(trace)), reader(*bytes) {}
  std::shared_ptr<const std::vector<uint8_t>> bytes;
  trace::Reader reader;
};

}  // namespace

TraceSource::TraceSource(const std::string& path) {
  if (!starts_as_pickle(path)) {
    file_ = std::make_shared<const trace::OpenedTrace>(path);
    reader();  // throws when the file is not a trace
    return;
  }
  trace::MappedFile file(path);
  try {
    pytorch::SnapshotTrace trace = pytorch::snapshot_trace(file.bytes());
    converted_ = std::make_shared<const std::vector<uint8_t>>(std::move(trace.bytes));
    snapshot_ = trace.info;
  } catch (const pytorch::PickleError& error) {
    throw trace::OpenError(std::string("not a PyTorch memory snapshot: ") + error.what());
  } catch (const pytorch::SnapshotError& error) {
    throw trace::OpenError(error.what());
  }
}

SourceRecords TraceSource::records(uint64_t limit) const {
  if (!join_) return SourceRecords(reader(), limit);
  return SourceRecords(reader(), limit, join_->records, join_->positions);
}

std::shared_ptr<trace::Reader> TraceSource::reader() const {
  if (file_) return std::make_shared<trace::Reader>(file_->map());
  auto held = std::make_shared<BufferReader>(converted_);
  return std::shared_ptr<trace::Reader>(held, &held->reader);
}

}  // namespace gpumemtrace::sources
