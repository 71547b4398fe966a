// The pull decoder every analyzer command reads traces with:
//
//   trace::Reader reader(path);                 // throws OpenError: unreadable, not a trace, other version
//   while (const trace::Record* record = reader.next()) {
//     if (auto* alloc = std::get_if<trace::Alloc>(record)) ...
//   }
//   reader.status();                            // Complete, Truncated (at stop_offset()) or Corrupt (error())
//
// It keeps the state the records build up: the stack trie, the module set, the Python code table, the native
// function table, the thread table and the process. These reflect every record returned so far, except that StacksReset and ModulesBegin take
// effect when the next record is read, so a caller can still resolve the old stacks and modules when it
// sees them. Decoding allocates nothing per Alloc/Free record.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trace/reader/field_cursor.h"
#include "trace/reader/mapped_file.h"
#include "trace/reader/module_set.h"
#include "trace/reader/open_error.h"
#include "trace/reader/records.h"
#include "trace/reader/stack_trie.h"
#include "trace/reader/thread_table.h"

namespace gpumemtrace::trace {

enum class Status : uint8_t {
  Reading,
  Complete,   // the End record was read
  Truncated,  // the written data ends without an End record (process killed, or still running)
  Corrupt,    // damaged data: error() says what and where
};

class Reader {
 public:
  // Maps the file read-only (a packed trace: unpacks it first, into memory).
  explicit Reader(const std::string& path);
  // Reads a mapping of an OpenedTrace (opened_trace.h): a trace opened once for several readings.
  explicit Reader(std::unique_ptr<MappedFile> file);
  // Reads bytes the caller keeps alive (tests, fuzzing).
  explicit Reader(std::span<const uint8_t> bytes);

  // The next record, or nullptr when the data ends (see status()). The record stays valid until the next
  // call; the strings it points to as long as the Reader. A mapping that may still grow (a packed trace
  // being unpacked) is waited for at its end; its unpacking failing throws OpenError.
  const Record* next();

  Status status() const { return status_; }
  const std::string& error() const { return error_; }        // "corrupt trace at byte offset N: ..."
  uint64_t record_offset() const { return record_offset_; }  // where the last returned record starts
  uint64_t stop_offset() const { return stop_offset_; }      // where reading stopped
  uint64_t file_size() const { return data_.size(); }
  // file_size(), or what a file still growing is expected to reach: how far reading is, for progress.
  uint64_t expected_size() const;

  uint64_t records() const { return records_; }
  // Records that say what the program did (those with a time, but End).
  uint64_t events() const { return events_; }
  uint64_t time_ns() const { return time_ns_; }
  uint32_t thread() const { return thread_; }

  const StackTrie& stacks() const { return stacks_; }
  const ModuleSet& modules() const { return modules_; }
  // The PythonCode records so far, by index: what the Python frames of the stack trie refer to
  // (format::python_code_of). Never reset.
  const std::vector<PythonCodeInfo>& python_codes() const { return python_codes_; }
  // The NativeFunction records so far, by index: what the named frames refer to (format::native_function_of).
  const std::vector<NativeFunctionInfo>& native_functions() const { return native_functions_; }
  const ThreadTable& threads() const { return threads_; }
  const Process* process() const { return has_process_ ? &process_ : nullptr; }  // the last one read

 private:
  class FieldReader;

  void check_header();
  const Record* read_next();
  const Record* next_after_growth();
  const Record* decode(uint8_t token, const uint8_t* start);
  const Record* decode_alloc(uint8_t token, const uint8_t* start);
  const Record* decode_free(uint8_t token, const uint8_t* start);
  template <typename R>
  const Record* decode(const uint8_t* start);
  template <typename R>
  bool read(FieldCursor& cursor, R& out, const uint8_t* start);
  // What a record changes in the reader's state, after its fields were read and checked. False: the record
  // is corrupt (recorded).
  template <typename R>
  bool apply(R&, const uint8_t*) {
    return true;
  }
  bool apply(Process& out, const uint8_t* start);
  bool apply(ModulesBegin& out, const uint8_t* start);
  bool apply(Module& out, const uint8_t* start);
  bool apply(StacksReset& out, const uint8_t* start);
  bool apply(StackNode& out, const uint8_t* start);
  bool apply(PythonCode& out, const uint8_t* start);
  bool apply(NativeFunction& out, const uint8_t* start);
  bool apply(ThreadNew& out, const uint8_t* start);
  bool apply(ThreadSwitch& out, const uint8_t* start);
  bool apply(End& out, const uint8_t* start);
  bool apply(DeviceState& out, const uint8_t* start);
  bool apply(DeviceProcess& out, const uint8_t* start);
  bool apply_state(uint8_t token, const uint8_t* start);
  void apply_pending_resets();
  const Record* stop(Status status, const uint8_t* at);
  const Record* corrupt(const uint8_t* at, std::string_view what);
  bool reject(const uint8_t* at, std::string_view what);  // corrupt(), for checks that answer true or false
  const Record* unknown_token(const uint8_t* start);
  const Record* cursor_failed(const FieldCursor& cursor, const uint8_t* start);
  bool whole(const FieldCursor& cursor, const uint8_t* start);  // false: truncated or corrupt, recorded
  template <typename R>
  const Record* accept(const FieldCursor& cursor, R& out);
  uint64_t offset_of(const uint8_t* p) const { return static_cast<uint64_t>(p - data_.data()); }

  std::unique_ptr<MappedFile> file_;
  std::span<const uint8_t> data_;
  const uint8_t* pos_ = nullptr;

  Status status_ = Status::Reading;
  std::string error_;
  uint64_t record_offset_ = 0;
  uint64_t stop_offset_ = 0;
  static constexpr uint64_t kReleaseStep = uint64_t{8} << 20;   // how often read pages are given back
  uint64_t next_release_ = kReleaseStep;
  uint64_t records_ = 0;
  uint64_t events_ = 0;

  Record record_;
  uint64_t time_ns_ = 0;
  uint64_t address_ = 0;  // the last Alloc/Free address, which the next one is a delta from
  // Every size the trace holds, added up: no sum the analyzer makes of them can wrap while this has not.
  uint64_t size_total_ = 0;
  bool add_size(uint64_t size) { return !__builtin_add_overflow(size_total_, size, &size_total_); }
  uint32_t thread_ = 0;
  int32_t device_ = kNoDevice;  // the device of the Alloc records (Device state record)
  std::vector<uint64_t> last_size_by_stack_ = std::vector<uint64_t>(1, 0);  // Alloc sizes are deltas per stack

  StackTrie stacks_;
  ModuleSet modules_;
  std::vector<PythonCodeInfo> python_codes_;
  std::vector<NativeFunctionInfo> native_functions_;
  ThreadTable threads_;
  Process process_;
  std::vector<std::string_view> argv_;     // the argv of process_
  std::vector<std::string_view> strings_;  // a string list being read
  bool has_process_ = false;
  bool stacks_reset_pending_ = false;
  bool modules_begin_pending_ = false;
  uint64_t pending_module_generation_ = 0;
  uint64_t device_processes_due_ = 0;  // DeviceProcess records the last DeviceState announced and not yet read
};

}  // namespace gpumemtrace::trace
