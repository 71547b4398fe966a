#include "trace/packed/pack.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <system_error>

#include "gpumemtrace/trace_records.h"
#include "common/write_all.h"
#include "trace/packed/container.h"
#include "trace/packed/pack_model.h"
#include "trace/packed/zstd_streams.h"
#include "trace/reader/field_cursor.h"
#include "trace/reader/mapped_file.h"
#include "trace/reader/opened_trace.h"
#include "trace/reader/reader.h"
#include "trace/writer/record_encoder.h"
#include "trace/writer/vector_output.h"

namespace gpumemtrace::packed {

namespace {

using format::Token;

class Packer {
 public:
  Packer(std::span<const uint8_t> plain, int level, const ProgressFn& progress)
      : plain_(plain), level_(level), progress_(progress), check_{checked_} {
    encoder_.restart();
  }

  std::vector<uint8_t> run(PackStats& stats) {
    trace::Reader reader(plain_);
    uint8_t header[format::kHeaderSize];
    format::put_header(header);
    if (std::memcmp(header, plain_.data(), sizeof header) != 0) throw PackedError(not_as_written(plain_.data()));
    size_t done = format::kHeaderSize;
    checked_from_ = done;
    while (const trace::Record* record = reader.next()) {
      units_.push_back(done);
      bool event = std::holds_alternative<trace::Alloc>(*record) || std::holds_alternative<trace::Free>(*record);
      event_time_ = state_records(done, reader.record_offset(), event);
      std::visit([&](const auto& r) { code(r, reader.record_offset(), reader.stop_offset()); }, *record);
      done = reader.stop_offset();
      check(done);
      if (done >= report_at_ && progress_) {
        progress_("packing", done, plain_.size());
        report_at_ = done + kReportEvery;
      }
    }
    if (reader.status() == trace::Status::Corrupt) {
      compare();  // a record before the damage not as written says so first, as it would have been found first
      throw PackedError(reader.error());
    }
    units_.push_back(done);
    state_records(done, reader.stop_offset(), false);  // Time records after the last event, in a truncated trace
    check(reader.stop_offset());
    compare();

    std::array<std::vector<uint8_t>, kStreams> frames;
    for (size_t i = 0; i < kStreams; ++i) stats.raw_bytes[i] = streams_[i].raw_bytes();
    uint64_t raw = std::accumulate(stats.raw_bytes.begin(), stats.raw_bytes.end(), uint64_t{0}), compressed = 0;
    ZstdCompressor compressor(level_);
    for (size_t i = 0; i < kStreams; ++i) {
      if (progress_) progress_("compressing", compressed, raw);
      frames[i] = streams_[i].compress(compressor);
      stats.compressed_bytes[i] = frames[i].size();
      compressed += stats.raw_bytes[i];
    }
    if (progress_) progress_("compressing", raw, raw);
    std::vector<uint8_t> file = write_container(frames);
    stats.plain_bytes = plain_.size();
    stats.packed_bytes = file.size();
    stats.events = reader.events();
    stats.complete = reader.status() == trace::Status::Complete;
    return file;
  }

 private:
  ZstdWriter& stream(Stream s) { return streams_[static_cast<size_t>(s)]; }

  // The Time and Device records the reader consumed before a record: [from, to). A Time right before an Alloc
  // or Free (or before the Device record of an Alloc) is coded with the event, which says where time moves
  // better than a token of its own: its step is returned, to be coded by the event.
  std::optional<uint64_t> state_records(size_t from, size_t to, bool before_event) {
    if (from == to) return std::nullopt;  // most records: events in the same granule of time follow each other
    states_.clear();
    trace::FieldCursor c(plain_.data() + from, plain_.data() + to);
    while (c.position() < plain_.data() + to) {
      const uint8_t* at = c.position();
      uint8_t token = static_cast<uint8_t>(c.u());
      uint64_t value = c.u();
      bool known = token == static_cast<uint8_t>(Token::Time) || token == static_cast<uint8_t>(Token::Device);
      if (c.failure() != trace::FieldCursor::Failure::None || !known) {
        compare();
        throw PackedError(not_as_written(at));
      }
      states_.push_back({token, value});
    }
    auto is = [&](size_t i, Token token) { return states_[i].token == static_cast<uint8_t>(token); };
    bool fold = before_event && !states_.empty() && is(0, Token::Time) &&
                (states_.size() == 1 || (states_.size() == 2 && is(1, Token::Device)));
    for (size_t i = 0; i < states_.size(); ++i) {
      if (is(i, Token::Time)) {
        encoder_.put(check_, trace::Time{states_[i].value});
        if (fold && i == 0) continue;
        stream(Stream::Tokens).byte(states_[i].token);
        stream(Stream::TimeLow).split(states_[i].value / format::kTimeGranularityNs, stream(Stream::TimeHigh));
        stream(Stream::TimeRest).varint(states_[i].value % format::kTimeGranularityNs);
      } else {
        stream(Stream::Tokens).byte(states_[i].token);
        stream(Stream::Devices).varint(states_[i].value);  // the encoder writes it again before the Alloc that follows
      }
    }
    return fold ? std::optional<uint64_t>(states_[0].value) : std::nullopt;
  }

  // An Alloc's or Free's time code: 0 no Time before it, else 1 + the granules of its step (and the rest).
  void code_event_time() {
    stream(Stream::TimeLow).split(event_time_ ? *event_time_ / format::kTimeGranularityNs + 1 : 0,
                                  stream(Stream::TimeHigh));
    if (event_time_) stream(Stream::TimeRest).varint(*event_time_ % format::kTimeGranularityNs);
  }

  void code(const trace::Alloc& a, size_t, size_t) {
    const format::ApiInfo& info = format::api_info(a.api);
    stream(Stream::Tokens).byte(static_cast<uint8_t>(Token::AllocBase) | static_cast<uint8_t>(a.api));
    code_event_time();
    uint64_t stack_code = model_.stacks.code_or_add(a.stack);
    stream(Stream::StackLow).split(stack_code, stream(Stream::StackHigh));
    if (stack_code == 0) stream(Stream::StackNew).varint(a.stack);
    uint64_t size_code = 0;
    if (model_.last_size(a.stack) != a.size) {
      uint64_t in_table = model_.sizes.code_or_add(a.size);
      size_code = in_table ? in_table + 1 : 1;
      if (!in_table) stream(Stream::SizeNew).varint(a.size);
    }
    stream(Stream::SizeLow).split(size_code, stream(Stream::SizeHigh));
    size_t freed = model_.freed_place(a.size, a.address);
    stream(Stream::AllocAddress).varint(freed == PackModel::kNone ? 0 : freed + 1);
    if (freed == PackModel::kNone)
      stream(Stream::AllocAddressNew).varint(format::zigzag(static_cast<int64_t>(a.address - model_.fresh_address())));
    if (info.takes_stream) stream(Stream::Extras).varint(a.stream);
    if (info.takes_pool) stream(Stream::Extras).varint(a.pool);
    model_.on_alloc(a.stack, a.address, a.size, freed);
    encoder_.put(check_, a);
  }

  void code(const trace::Free& f, size_t, size_t) {
    stream(Stream::Tokens).byte(static_cast<uint8_t>(Token::FreeBase) | static_cast<uint8_t>(f.api));
    code_event_time();
    size_t live = model_.on_free(f.address);
    stream(Stream::FreeLow).split(live == PackModel::kNone ? 0 : live + 1, stream(Stream::FreeHigh));
    if (live == PackModel::kNone)
      stream(Stream::FreeAddressNew).varint(format::zigzag(static_cast<int64_t>(f.address - model_.last_address())));
    if (format::api_info(f.api).takes_stream) stream(Stream::Extras).varint(f.stream);
    encoder_.put(check_, f);
  }

  void code(const trace::StacksReset& r, size_t, size_t) {
    stream(Stream::Tokens).byte(static_cast<uint8_t>(Token::StacksReset));
    encoder_.put(check_, r);
  }

  // Every other record: its bytes as they are.
  template <typename R>
  void code(const R&, size_t start, size_t end) {
    std::span<const uint8_t> body = plain_.subspan(start + 1, end - start - 1);
    stream(Stream::Tokens).byte(plain_[start]);
    stream(Stream::OtherLengths).varint(body.size());
    stream(Stream::Others).bytes(body);
    checked_.insert(checked_.end(), plain_.begin() + static_cast<ptrdiff_t>(start),
                    plain_.begin() + static_cast<ptrdiff_t>(end));
  }

  // What was coded must unpack to the bytes of the plain trace: the writer's encoder, given the same records,
  // writes them again into checked_. The length is checked after every record (with what came before it:
  // a unit), the bytes once kCheckEvery have gathered; one memcmp of 64 KiB where one per record cost 3 % of
  // packing (docs/benchmarks.md).
  void check(size_t to) {
    if (checked_from_ + checked_.size() != to) {
      throw_at_difference(units_.back() - checked_from_);  // the units before this one, whose lengths were right
      throw PackedError(not_as_written(plain_.data() + units_.back()));
    }
    if (checked_.size() >= kCheckEvery) compare();
  }
  void compare() {
    throw_at_difference(checked_.size());
    checked_from_ += checked_.size();
    checked_.clear();
    units_.clear();
  }
  // A difference in the first `count` bytes of checked_ is reported at the start of the unit that holds it.
  void throw_at_difference(size_t count) const {
    if (std::memcmp(checked_.data(), plain_.data() + checked_from_, count) == 0) return;
    auto mine = checked_.begin();
    auto theirs = plain_.begin() + static_cast<ptrdiff_t>(checked_from_);
    auto differs = std::mismatch(mine, mine + static_cast<ptrdiff_t>(count), theirs);
    size_t at = checked_from_ + static_cast<size_t>(differs.first - mine);
    throw PackedError(not_as_written(plain_.data() + *(std::upper_bound(units_.begin(), units_.end(), at) - 1)));
  }
  std::string not_as_written(const uint8_t* at) const {
    return "the records at byte offset " + std::to_string(at - plain_.data()) +
           " are not as the writer writes them: the trace is not packed";
  }

  static constexpr size_t kReportEvery = size_t{1} << 22;  // bytes of the plain trace between progress reports
  static constexpr size_t kCheckEvery = size_t{1} << 16;   // bytes coded between comparisons with the plain trace

  std::span<const uint8_t> plain_;
  int level_;
  const ProgressFn& progress_;
  size_t report_at_ = 0;
  std::array<ZstdWriter, kStreams> streams_;
  PackModel model_;
  writer::RecordEncoder encoder_;
  std::vector<uint8_t> checked_;  // the coded records as the unpacker will write them, not yet compared
  size_t checked_from_ = 0;       // where checked_'s bytes are in the plain trace
  std::vector<size_t> units_;     // where each record in checked_ begins, with the Time and Device before it
  writer::VectorOutput check_;
  struct State {
    uint8_t token;
    uint64_t value;
  };
  std::vector<State> states_;              // the Time and Device records before the record being coded
  std::optional<uint64_t> event_time_;     // the step of the Time coded with the next Alloc or Free
};

[[noreturn]] void fail(const std::string& what, int error) { throw std::system_error(error, std::generic_category(), what); }

}  // namespace

std::vector<uint8_t> pack(std::span<const uint8_t> plain, int level, PackStats& stats, const ProgressFn& progress) {
  return Packer(plain, level, progress).run(stats);
}

PackStats pack_file(const std::string& path, int level, const ProgressFn& progress) {
  trace::MappedFile file(path);
  if (is_packed(file.bytes())) throw PackedError("the trace is packed already");
  if (trace::is_first_layout(file.bytes()))
    throw PackedError("the trace is of the first builds' layout (before 2026-11-22 03:44 UTC): every command reads it, "
                      "but it is not packed");
  // The writer holds an exclusive lock on its file while its process runs (trace/writer/trace_file.h).
  int lock = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (lock < 0) fail("cannot open " + path, errno);
  std::unique_ptr<int, void (*)(int*)> lock_held(&lock, [](int* fd) { close(*fd); });
  if (flock(lock, LOCK_SH | LOCK_NB) != 0) throw PackedError("a live process is still writing the trace");

  PackStats stats;
  std::vector<uint8_t> packed = pack(file.bytes(), level, stats, progress);
  std::string temporary = path + ".packing";
  unlink(temporary.c_str());  // left over from a packing that was killed
  int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) fail("cannot create " + temporary, errno);
  try {
    write_all(fd, packed, "cannot write " + temporary);
    if (fsync(fd) != 0) fail("cannot write " + temporary, errno);
  } catch (...) {
    close(fd);
    unlink(temporary.c_str());
    throw;
  }
  close(fd);
  if (rename(temporary.c_str(), path.c_str()) != 0) {
    int error = errno;
    unlink(temporary.c_str());
    fail("cannot replace " + path, error);
  }
  return stats;
}

}  // namespace gpumemtrace::packed
