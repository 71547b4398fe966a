// Encodes trace records (include/gpumemtrace/trace_format.h) into a MappedFileSink.
// Each record's body is written first and its token last, so a reader (or a crash) never sees half a
// record. Not thread-safe by itself: the recorder serializes calls, because stack nodes, thread switches
// and the event that needs them must land in the file in that order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpumemtrace/trace_format.h"
#include "trace/writer/mapped_file_sink.h"

namespace gpumemtrace::writer {

struct ProcessInfo {
  uint64_t pid = 0;
  uint64_t ppid = 0;
  uint64_t start_wall_ns = 0;
  uint64_t max_stack_depth = 0;
  int64_t rank = -1;
  std::string hostname;
  std::string executable;
  std::vector<std::string> argv;
};

struct ModuleInfo {
  uint64_t base = 0;
  uint64_t low = 0;
  uint64_t high = 0;
  std::string path;
  std::string build_id;
};

class TraceWriter {
 public:
  // Creates the file, writes the header and the Process record. The clock starts now.
  bool open(const std::string& path, const ProcessInfo& process);
  bool is_open() const { return sink_.is_open(); }
  const std::string& error() const { return sink_.error(); }
  // A record could not be written (disk full, size limit): the trace ends here.
  bool failed() const { return sink_.failed(); }

  void modules(uint64_t generation, const std::vector<ModuleInfo>& modules);
  void stacks_reset();
  void stack_node(uint64_t parent, uint64_t ip);
  void thread_new(uint64_t index, uint64_t tid, std::string_view name);
  void thread_switch(uint64_t index);

  void alloc(format::Api api, int device, uint64_t address, uint64_t size, uint64_t stack, uint64_t stream,
             uint64_t pool);
  void free(format::Api api, uint64_t address, uint64_t stream);
  void free_failed(format::Api api, uint64_t address, uint64_t error);
  void alloc_failed(format::Api api, int device, uint64_t size, uint64_t stack, uint64_t error, uint64_t free_bytes,
                    uint64_t total_bytes);
  void mem_map(uint64_t address, uint64_t size, uint64_t handle, uint64_t offset);
  void mem_unmap(uint64_t address, uint64_t size);
  void address_reserve(uint64_t address, uint64_t size);
  void address_free(uint64_t address, uint64_t size);
  void pool_create(uint64_t pool, int device);
  void pool_destroy(uint64_t pool);
  void pool_trim(uint64_t pool, uint64_t min_keep, uint64_t reserved, uint64_t used);
  void pool_usage(uint64_t pool, int device, uint64_t reserved, uint64_t used);
  void mem_info(int device, uint64_t free_bytes, uint64_t total_bytes);
  void fork_child(uint64_t child_pid);
  // Marks the trace complete and closes the file.
  void end();
  // Drops the file without writing (a forked child holds its parent's mapping).
  void abandon() { sink_.abandon(); }
  void sync() { sink_.sync(); }

  // The time of the next event, read by the caller before it took the lock that orders the records (0:
  // the writer reads the clock itself). A time before the last Time record written counts as that one.
  void set_event_time(uint64_t now_ns) { event_time_ns_ = now_ns; }

  uint64_t events() const { return events_; }
  uint64_t bytes() const { return sink_.size(); }

 private:
  class Record;
  // Writes a Time record first if the clock moved by the format's granularity since the last one.
  void advance_time();

  MappedFileSink sink_;
  uint64_t last_time_ns_ = 0;  // the time the reader will have reached
  uint64_t event_time_ns_ = 0;
  uint64_t last_address_ = 0;
  int device_ = -1;            // the reader's current device
  std::vector<uint64_t> last_size_by_stack_;  // indexed by stack id: sizes are deltas per call site
  uint64_t events_ = 0;
};

uint64_t monotonic_ns();

}  // namespace gpumemtrace::writer
