#include "analyzer/pytorch/snapshot.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <string>
#include <variant>

namespace gpumemtrace::pytorch {

namespace {

using Id = Pickle::Id;
using schema::Action;
using schema::BlockState;

}  // namespace

// Walks the values of the pickle by the schema, with where it is ("segments[3].blocks[0]") for messages,
// and charges what it visits to the reader's budget: a hostile pickle can refer to one big list from
// millions of places, and each reference would be walked again.
class SnapshotReader::Walk {
 public:
  Walk(SnapshotReader& reader, const Pickle& pickle) : reader_(reader), pickle_(pickle) {}

  // A step into a key or an item, for messages; undone when it goes out of scope. The steps are a chain
  // through the stack, read only when a message is made: a history has millions of fields.
  class Step {
   public:
    Step(Walk& walk, std::variant<std::string_view, size_t> step)
        : walk_(walk), step_(step), outer_(walk.innermost_) {
      walk_.innermost_ = this;
    }
    ~Step() { walk_.innermost_ = outer_; }
    Step(const Step&) = delete;
    Step& operator=(const Step&) = delete;

   private:
    friend class Walk;
    Walk& walk_;
    std::variant<std::string_view, size_t> step_;
    const Step* outer_;
  };

  [[noreturn, gnu::cold]] void fail(std::string_view what) const {
    std::vector<const Step*> path;
    for (const Step* step = innermost_; step; step = step->outer_) path.push_back(step);
    std::string where;
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      if (const auto* key = std::get_if<std::string_view>(&(*it)->step_))
        where += fmt::format("{}{}", where.empty() ? "" : ".", *key);
      else
        where += fmt::format("[{}]", std::get<size_t>((*it)->step_));
    }
    throw SnapshotError(fmt::format("not a PyTorch memory snapshot: {}{}{}", where, where.empty() ? "" : " ", what));
  }

  void charge(uint64_t visits) {
    uint64_t budget = 4 * pickle_.total_items() + pickle_.total_values() + 4096;  // grows while streaming
    if (visits > budget - reader_.visits_)
      fail("refers to its shared parts too many times to be walked (a snapshot refers to each part about once)");
    reader_.visits_ += visits;
  }

  const PickleValue& value(Id id) {
    charge(1);
    return pickle_[id];
  }
  [[noreturn]] void wrong_kind(const PickleValue& value, std::string_view wanted) const {
    fail(fmt::format("is a {}, not {}", pickle_kind_name(value.kind), wanted));
  }

  // A dict's entries; find() gives the value of a string key (the last one, as Python keeps it).
  class Dict {
   public:
    Dict(Walk& walk, Id id) : walk_(walk) {
      const PickleValue& value = walk.value(id);
      if (value.kind != PickleKind::Dict) walk.wrong_kind(value, "a dict");
      items_ = walk.pickle_.items(value);
      walk.charge(items_.size());
    }
    std::optional<Id> find(std::string_view key) const { return find_all(std::array{key})[0]; }
    Id at(std::string_view key) const { return walk_.required(key, find(key)); }
    // What find() gives for each of `keys` (none empty), in one walk over the dict: a history entry has millions.
    template <size_t N>
    std::array<std::optional<Id>, N> find_all(const std::array<std::string_view, N>& keys) const {
      std::array<std::optional<Id>, N> found;
      for (size_t i = items_.size(); i >= 2; i -= 2) {
        const PickleValue& k = walk_.pickle_[items_[i - 2]];
        if (k.kind != PickleKind::Str) continue;
        std::string_view text = walk_.pickle_.text(k);
        for (size_t j = 0; j < N; ++j) {
          if (found[j] || text.size() != keys[j].size() || text.empty() || text[0] != keys[j][0] || text != keys[j])
            continue;
          found[j] = items_[i - 1];
          break;
        }
      }
      return found;
    }

   private:
    Walk& walk_;
    std::span<const Id> items_;
  };

  std::span<const Id> list(Id id) {
    const PickleValue& value = this->value(id);
    if (value.kind != PickleKind::List && value.kind != PickleKind::Tuple) wrong_kind(value, "a list");
    std::span<const Id> items = pickle_.items(value);
    charge(items.size());
    return items;
  }

  int64_t integer(Id id) {
    const PickleValue& value = this->value(id);
    if (value.kind == PickleKind::Bool) return static_cast<int64_t>(value.payload);
    if (value.kind != PickleKind::Int || value.payload > (value.negative ? uint64_t{1} << 63 : uint64_t{INT64_MAX}))
      wrong_kind(value, "an integer of 64 bits");
    return value.negative ? static_cast<int64_t>(uint64_t{0} - value.payload) : static_cast<int64_t>(value.payload);
  }
  uint64_t count(Id id) {  // a size or an address
    const PickleValue& value = this->value(id);
    if (value.kind != PickleKind::Int || value.negative) wrong_kind(value, "a non-negative integer");
    return value.payload;
  }
  bool boolean(Id id) {
    const PickleValue& value = this->value(id);
    if (value.kind != PickleKind::Bool) wrong_kind(value, "a bool");
    return value.payload != 0;
  }
  std::string_view text(Id id) {
    const PickleValue& value = this->value(id);
    if (value.kind != PickleKind::Str) wrong_kind(value, "a str");
    return pickle_.text(value);
  }
  // A field that may be missing or None.
  std::optional<Id> optional(const Dict& dict, std::string_view key) { return unless_none(dict.find(key)); }
  std::optional<Id> unless_none(std::optional<Id> id) const {
    if (id && pickle_[*id].kind == PickleKind::None) return std::nullopt;
    return id;
  }

  // What the dict has for `key` (`id`), which must be there.
  Id required(std::string_view key, std::optional<Id> id) const {
    if (!id) fail(fmt::format("has no '{}'", key));
    return *id;
  }
  // A field that must be there: `id` is what the dict has for `key`.
  template <typename Read>
  auto field(std::string_view key, std::optional<Id> id, Read read) {
    Id value = required(key, id);
    Step step(*this, key);
    return read(value);
  }
  template <typename Read>
  auto field(const Dict& dict, std::string_view key, Read read) {
    return field(key, dict.find(key), read);
  }
  uint64_t count_field(std::string_view key, std::optional<Id> id) {
    return field(key, id, [&](Id v) { return count(v); });
  }
  uint64_t count_field(const Dict& dict, std::string_view key) { return count_field(key, dict.find(key)); }

  // A list of frames, or a text: missing or None is none; so is an empty list, unless `empty_too` (the list
  // may still grow: whether it is empty is known when the whole pickle is read).
  FramesId frames_field(std::string_view key, std::optional<Id> id, bool empty_too = false) {
    id = unless_none(id);
    if (!id) return kNoFrames;
    Step step(*this, key);
    return list(*id).empty() && !empty_too ? kNoFrames : *id;
  }
  FramesId frames_field(const Dict& dict, std::string_view key) { return frames_field(key, dict.find(key)); }
  std::string_view text_field(std::string_view key, std::optional<Id> id) {
    id = unless_none(id);
    if (!id) return {};
    Step step(*this, key);
    return text(*id);
  }
  std::string_view text_field(const Dict& dict, std::string_view key) { return text_field(key, dict.find(key)); }

  SnapshotReader& reader_;
  const Pickle& pickle_;
  const Step* innermost_ = nullptr;
};

SnapshotReader::SnapshotReader(std::span<const uint8_t> bytes, ReadTo read_to)
    : bytes_(bytes), read_to_(std::move(read_to)) {}
SnapshotReader::SnapshotReader(const Pickle& pickle) : pickle_(&pickle), whole_(true) {}

namespace {

using Walk = SnapshotReader::Walk;

SnapshotBlock read_block(Walk& walk, Id id, uint64_t address, bool& legacy) {
  Walk::Dict dict(walk, id);
  SnapshotBlock block;
  block.address = address;
  block.size = walk.count_field(dict, schema::kSize);
  std::string_view state = walk.field(dict, schema::kState, [&](Id v) { return walk.text(v); });
  std::optional<BlockState> known = schema::named<BlockState>(schema::kBlockStates, state);
  if (!known) {
    Walk::Step step(walk, schema::kState);
    walk.fail(fmt::format("is '{}', not a block state", state));
  }
  block.state = *known;
  std::optional<Id> requested = walk.optional(dict, schema::kRequestedSize);
  block.requested = requested ? walk.count_field(dict, schema::kRequestedSize) : block.size;
  block.user_metadata = walk.text_field(dict, schema::kUserMetadata);
  if (dict.find(schema::kFrames)) {
    block.frames = walk.frames_field(dict, schema::kFrames);
    return block;
  }
  // The legacy form: the allocations of the block, the first one with the stack and size _memory_viz.py
  // counts for it.
  std::optional<Id> history = walk.optional(dict, schema::kHistory);
  if (!history) return block;
  legacy = true;
  Walk::Step step(walk, schema::kHistory);
  std::span<const Id> entries = walk.list(*history);
  if (entries.empty()) return block;
  Walk::Step first(walk, size_t{0});
  Walk::Dict entry(walk, entries[0]);
  block.requested = walk.count_field(entry, schema::kRealSize);
  block.frames = walk.frames_field(entry, schema::kFrames);
  return block;
}

SnapshotSegment read_segment(Walk& walk, Id id, bool& legacy) {
  Walk::Dict dict(walk, id);
  SnapshotSegment segment;
  int64_t device = walk.field(dict, schema::kDevice, [&](Id v) { return walk.integer(v); });
  if (device < 0 || device >= INT32_MAX) {
    Walk::Step step(walk, schema::kDevice);
    walk.fail(fmt::format("is {}, not a device", device));
  }
  segment.device = static_cast<int32_t>(device);
  segment.address = walk.count_field(dict, schema::kAddress);
  segment.total_size = walk.count_field(dict, schema::kTotalSize);
  if (walk.optional(dict, schema::kStream))
    segment.stream = static_cast<uint64_t>(walk.field(dict, schema::kStream, [&](Id v) { return walk.integer(v); }));
  if (walk.optional(dict, schema::kSegmentType)) segment.large_pool = walk.text_field(dict, schema::kSegmentType) == schema::kLargePool;
  if (walk.optional(dict, schema::kIsExpandable))
    segment.expandable = walk.field(dict, schema::kIsExpandable, [&](Id v) { return walk.boolean(v); });
  segment.frames = walk.frames_field(dict, schema::kFrames);
  Walk::Step step(walk, schema::kBlocks);
  std::span<const Id> blocks = walk.list(dict.at(schema::kBlocks));
  uint64_t address = segment.address;
  for (size_t i = 0; i < blocks.size(); ++i) {
    Walk::Step item(walk, i);
    SnapshotBlock block = read_block(walk, blocks[i], address, legacy);
    address += block.size;
    segment.blocks.push_back(block);
  }
  return segment;
}

// `streamed`: its frames are a list even when empty (HistoryStream::release says which are).
SnapshotEntry read_entry(Walk& walk, Id id, uint64_t& unknown_actions, bool& known, bool streamed = false) {
  enum Key : uint8_t { kAction, kAddr, kSize, kStream, kTimeUs, kFrames, kUserMetadata, kDeviceFree, kKeys };
  static constexpr std::array<std::string_view, kKeys> kNames = {
      schema::kAction, schema::kAddr,   schema::kSize,         schema::kStream,
      schema::kTimeUs, schema::kFrames, schema::kUserMetadata, schema::kDeviceFree};
  Walk::Dict dict(walk, id);
  std::array<std::optional<Id>, kKeys> found = dict.find_all(kNames);
  SnapshotEntry entry;
  std::string_view action = walk.field(schema::kAction, found[kAction], [&](Id v) { return walk.text(v); });
  std::optional<Action> named = schema::named<Action>(schema::kActions, action);
  known = named.has_value();
  if (!known) {
    ++unknown_actions;
    return entry;
  }
  entry.action = *named;
  if (entry.action == Action::Oom) {
    // The free bytes are in "device_free" (older versions put them in "addr").
    entry.device_free = found[kDeviceFree] ? walk.count_field(schema::kDeviceFree, found[kDeviceFree])
                                           : walk.count_field(schema::kAddr, found[kAddr]);
  } else if (entry.action != Action::Snapshot) {
    entry.address = walk.count_field(schema::kAddr, found[kAddr]);
  }
  if (found[kSize]) entry.size = walk.count_field(schema::kSize, found[kSize]);
  if (walk.unless_none(found[kStream]))
    entry.stream = static_cast<uint64_t>(walk.field(schema::kStream, found[kStream], [&](Id v) { return walk.integer(v); }));
  if (walk.unless_none(found[kTimeUs])) entry.time_us = walk.count_field(schema::kTimeUs, found[kTimeUs]);
  entry.frames = walk.frames_field(schema::kFrames, found[kFrames], streamed);
  entry.user_metadata = walk.text_field(schema::kUserMetadata, found[kUserMetadata]);
  return entry;
}

// allocator_settings: each setting read when it has the form 2.14.1 writes, else left out.
AllocatorSettings read_settings(Walk& walk, Id id, const Pickle& pickle) {
  AllocatorSettings settings;
  Walk::Dict dict(walk, id);
  auto of_kind = [&](std::string_view key, PickleKind kind) -> std::optional<Id> {
    std::optional<Id> value = dict.find(key);
    return value && pickle[*value].kind == kind ? value : std::nullopt;
  };
  if (auto conf = of_kind(schema::kAllocConf, PickleKind::Str)) settings.alloc_conf = pickle.text(pickle[*conf]);
  if (auto expandable = of_kind(schema::kExpandableSegments, PickleKind::Bool))
    settings.expandable_segments = pickle[*expandable].payload != 0;
  if (auto split = of_kind(schema::kMaxSplitSize, PickleKind::Int); split && !pickle[*split].negative)
    settings.max_split_size = pickle[*split].payload;
  if (auto threshold = of_kind(schema::kGarbageCollectionThreshold, PickleKind::Float))
    settings.garbage_collection_threshold = std::bit_cast<double>(pickle[*threshold].payload);
  if (auto divisions = of_kind(schema::kRoundupPower2Divisions, PickleKind::Dict)) {
    Walk::Dict by_mib(walk, *divisions);
    std::array<uint64_t, 16> values{};
    bool complete = true;
    for (size_t i = 0; i < values.size() && complete; ++i) {
      std::optional<Id> value = by_mib.find(std::to_string(uint64_t{1} << i));
      complete = value && pickle[*value].kind == PickleKind::Int && !pickle[*value].negative;
      if (complete) values[i] = pickle[*value].payload;
    }
    if (complete) settings.roundup_power2_divisions = values;
  }
  return settings;
}

// The stream could not take the history alone: the pickle is read again whole.
struct NotStreamed {};

}  // namespace

// Takes the entries of the lists in device_traces as the pickle appends them: a list of lists that follows
// the key "device_traces" on the stack (where Python's pickler and ours have it while the root dict is
// built). Whether that list is the snapshot's device_traces is known at the end (read()).
class SnapshotReader::HistoryStream : public PickleListSink {
 public:
  explicit HistoryStream(SnapshotReader& reader) : reader_(reader) {}

  bool takes(const Pickle& pickle, std::span<const Id> below, Id list) override {
    if (taken_.contains(list)) return true;
    if (below.size() < 2) return false;
    const PickleValue& outer = pickle[below[below.size() - 1]];
    const PickleValue& key = pickle[below[below.size() - 2]];
    if (outer.kind != PickleKind::List || key.kind != PickleKind::Str || pickle.text(key) != schema::kDeviceTraces)
      return false;
    taken_.try_emplace(list);
    return true;
  }

  void take(const Pickle& pickle, Id list, Id item, std::vector<Id>& keep) override {
    if (!walk_) walk_.emplace(reader_, pickle);  // one for every entry (its path's vector is made once)
    walk_->charge(1);  // as the list's item (Walk::list)
    bool known = false;
    SnapshotEntry entry = read_entry(*walk_, item, unknown_actions_, known, true);
    if (!known) return;
    if (entry.frames != kNoFrames && taken_.contains(entry.frames)) throw NotStreamed{};  // empty here, not whole
    if (entry.frames != kNoFrames) keep.push_back(entry.frames);
    if (list != last_list_) {
      last_taken_ = &taken_[list];
      last_list_ = list;
    }
    last_taken_->entries.push_back(entry);
  }

  void renumber(Id first, std::span<const Id> renumbered) override {
    if (!taken_.empty() && taken_.rbegin()->first >= first) throw NotStreamed{};  // a list it takes was in the batch
    for (auto& [list, taken] : taken_) {
      for (size_t i = taken.settled; i < taken.entries.size(); ++i) {
        FramesId& frames = taken.entries[i].frames;
        if (frames != kNoFrames && frames >= first) frames = renumbered[frames - first];
      }
      taken.settled = taken.entries.size();
    }
  }

  void read_to(uint64_t offset) override {
    if (reader_.read_to_) reader_.read_to_(offset);
  }

  bool took(Id list) const { return taken_.contains(list); }
  // The entries of a list it took, once, when the whole pickle is read: frames still empty are none.
  EntryArray<SnapshotEntry> release(Id list, const Pickle& pickle) {
    Taken& taken = taken_.at(list);
    if (taken.released) throw NotStreamed{};  // device_traces holds the list twice
    taken.released = true;
    for (SnapshotEntry& entry : taken.entries)
      if (entry.frames != kNoFrames && pickle.items(pickle[entry.frames]).empty()) entry.frames = kNoFrames;
    return std::move(taken.entries);
  }
  bool all_released() const {
    return std::all_of(taken_.begin(), taken_.end(), [](const auto& taken) { return taken.second.released; });
  }
  uint64_t unknown_actions() const { return unknown_actions_; }

 private:
  struct Taken {
    EntryArray<SnapshotEntry> entries;
    size_t settled = 0;  // entries whose frames are renumbered
    bool released = false;
  };
  SnapshotReader& reader_;
  std::optional<Walk> walk_;
  std::map<Id, Taken> taken_;  // by list: one per device
  Id last_list_ = UINT32_MAX;  // the list of the last entry taken, and its Taken
  Taken* last_taken_ = nullptr;
  uint64_t unknown_actions_ = 0;
};

Snapshot SnapshotReader::read() {
  if (whole_) return read(nullptr);
  try {
    return read_streamed();
  } catch (const NotStreamed&) {
  } catch (const PickleError&) {
  } catch (const SnapshotError&) {
  }
  // Read whole: the same snapshot, or the error with where it is.
  own_.reset();
  visits_ = 0;
  frames_read_.clear();
  own_ = std::make_unique<Pickle>(bytes_);
  pickle_ = own_.get();
  return read(nullptr);
}

Snapshot SnapshotReader::read_streamed() {
  HistoryStream stream(*this);
  own_ = std::make_unique<Pickle>(bytes_, &stream);
  pickle_ = own_.get();
  return read(&stream);
}

Snapshot SnapshotReader::read(HistoryStream* stream) {
  Walk walk(*this, *pickle_);
  const Pickle& pickle = *pickle_;
  Snapshot snapshot;
  Id root = pickle.root();
  std::optional<Id> segments = root;
  std::optional<Id> traces;
  if (pickle[root].kind == PickleKind::Dict) {
    Walk::Dict dict(walk, root);
    segments = dict.at(schema::kSegments);
    traces = walk.optional(dict, schema::kDeviceTraces);
    // Only advice depends on the settings: a snapshot whose settings have another form is still read.
    if (std::optional<Id> settings = dict.find(schema::kAllocatorSettings);
        settings && pickle[*settings].kind == PickleKind::Dict)
      snapshot.settings = read_settings(walk, *settings, pickle);
  } else if (pickle[root].kind == PickleKind::List) {
    snapshot.legacy = true;
  } else {
    walk.fail(fmt::format("it is a {}, not a dict of segments and traces", pickle_kind_name(pickle[root].kind)));
  }
  {
    Walk::Step step(walk, schema::kSegments);
    std::span<const Id> items = walk.list(*segments);
    for (size_t i = 0; i < items.size(); ++i) {
      Walk::Step item(walk, i);
      snapshot.segments.push_back(read_segment(walk, items[i], snapshot.legacy));
    }
  }
  if (!traces) {
    if (stream && !stream->all_released()) throw NotStreamed{};
    return snapshot;
  }
  Walk::Step step(walk, schema::kDeviceTraces);
  std::span<const Id> devices = walk.list(*traces);
  for (size_t device = 0; device < devices.size(); ++device) {
    Walk::Step item(walk, device);
    EntryArray<SnapshotEntry>& entries = snapshot.device_traces.emplace_back();
    std::span<const Id> items = walk.list(devices[device]);
    if (stream && stream->took(devices[device])) {
      if (!items.empty()) throw NotStreamed{};  // also appended to as no history list is
      entries = stream->release(devices[device], pickle);
      continue;
    }
    for (size_t i = 0; i < items.size(); ++i) {
      Walk::Step entry(walk, i);
      bool known = false;
      SnapshotEntry read = read_entry(walk, items[i], snapshot.unknown_actions, known);
      if (known) entries.push_back(read);
    }
  }
  if (stream) {
    if (!stream->all_released()) throw NotStreamed{};
    snapshot.unknown_actions += stream->unknown_actions();
  }
  return snapshot;
}

std::vector<SnapshotFrame> SnapshotReader::frames(FramesId id) {
  Walk walk(*this, *pickle_);
  Walk::Step step(walk, schema::kFrames);
  std::vector<SnapshotFrame> out;
  std::span<const Id> items = walk.list(id);
  for (size_t i = 0; i < items.size(); ++i) {
    auto [read, added] = frames_read_.try_emplace(items[i]);
    if (added) {
      Walk::Step item(walk, i);
      Walk::Dict frame(walk, items[i]);
      SnapshotFrame& f = read->second;
      f.filename = walk.text_field(frame, schema::kFilename);
      f.name = walk.text_field(frame, schema::kName);
      if (walk.optional(frame, schema::kLine)) {
        int64_t line = walk.field(frame, schema::kLine, [&](Id v) { return walk.integer(v); });
        f.line = line > 0 ? static_cast<uint64_t>(line) : 0;
      }
    }
    out.push_back(read->second);
  }
  return out;
}

}  // namespace gpumemtrace::pytorch
