#include "analyzer/sources/trace_source.h"

#include "analyzer/pytorch/pickle_reader.h"
#include "analyzer/pytorch/snapshot.h"
#include "trace/reader/mapped_file.h"

#include <system_error>

namespace gpumemtrace::sources {

TraceSource::TraceSource(const std::string& path, const ProgressFn& progress) {
  trace::MappedFile file(path);  // throws OpenError when the file cannot be read (a FIFO: at once, never blocking)
  if (!pytorch::looks_like_pickle(file.bytes())) {
    file_ = std::make_shared<const trace::OpenedTrace>(path);
    trace::Reader check(file_->map_as_it_comes());  // throws when the file is not a trace
    return;
  }
  try {
    // The pickle's pages are let go of behind the reading: a file of a GB is not held whole.
    uint64_t size = file.bytes().size();
    pytorch::SnapshotTrace trace = pytorch::snapshot_trace(
        file.bytes(),
        [&](uint64_t offset) {
          file.release_before(offset);
          if (progress) progress("reading", offset, size);
        },
        progress);
    file_ = std::move(trace.trace);
    snapshot_ = trace.info;
  } catch (const pytorch::PickleError& error) {
    throw trace::OpenError(std::string("not a PyTorch memory snapshot: ") + error.what());
  } catch (const pytorch::SnapshotError& error) {
    throw trace::OpenError(error.what());
  } catch (const std::system_error& error) {
    throw trace::OpenError(std::string("cannot hold the snapshot's trace: ") + error.what());
  }
}

bool TraceSource::holds_snapshot(const std::string& path) {
  return pytorch::looks_like_pickle(trace::MappedFile(path).bytes());
}

SourceRecords TraceSource::records(uint64_t limit, Unpacked unpacked) const {
  std::shared_ptr<trace::Reader> trace = reader(unpacked);
  if (!join_) return SourceRecords(std::move(trace), limit);
  return SourceRecords(std::move(trace), limit, join_->records, join_->positions);
}

std::shared_ptr<trace::Reader> TraceSource::reader(Unpacked unpacked) const {
  return std::make_shared<trace::Reader>(unpacked == Unpacked::AsItComes ? file_->map_as_it_comes() : file_->map());
}

}  // namespace gpumemtrace::sources
