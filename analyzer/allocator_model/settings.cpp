#include "analyzer/allocator_model/settings.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <vector>

#include <fmt/format.h>

namespace gpumemtrace::allocator_model {
namespace {

// PyTorch's tokens: ',', ':', '[' and ']' each alone, the text between them without spaces.
std::vector<std::string> tokens_of(std::string_view conf) {
  std::vector<std::string> tokens;
  std::string word;
  for (char c : conf) {
    if (c == ',' || c == ':' || c == '[' || c == ']') {
      if (!word.empty()) tokens.push_back(std::move(word));
      word.clear();
      tokens.emplace_back(1, c);
    } else if (c != ' ' && c != '\t' && c != '\n') {
      word += c;
    }
  }
  if (!word.empty()) tokens.push_back(std::move(word));
  return tokens;
}

class Tokens {
 public:
  explicit Tokens(std::string_view conf) : tokens_(tokens_of(conf)) {}
  bool done() const { return at_ >= tokens_.size(); }
  const std::string& peek() const {
    static const std::string end;
    return done() ? end : tokens_[at_];
  }
  std::string next(std::string_view what) {
    if (done()) throw SettingsError(fmt::format("expected {} at the end of the settings", what));
    return tokens_[at_++];
  }
  void expect(char c) {
    std::string token = next(fmt::format("'{}'", c));
    if (token != std::string(1, c)) throw SettingsError(fmt::format("expected '{}', found '{}'", c, token));
  }

 private:
  std::vector<std::string> tokens_;
  size_t at_ = 0;
};

uint64_t whole_number(const std::string& text, std::string_view option) {
  uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size())
    throw SettingsError(fmt::format("{}: '{}' is not a whole number", option, text));
  return value;
}

double decimal(const std::string& text, std::string_view option) {
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size())
    throw SettingsError(fmt::format("{}: '{}' is not a number", option, text));
  return value;
}

bool true_or_false(const std::string& text, std::string_view option) {
  if (text == "True" || text == "true") return true;
  if (text == "False" || text == "false") return false;
  throw SettingsError(fmt::format("{}: expected True or False, found '{}'", option, text));
}

// A size in MiB no smaller than 20 MiB (PyTorch refuses less for both options).
uint64_t mebibytes_from_20(const std::string& text, std::string_view option) {
  uint64_t mib = whole_number(text, option);
  if (mib < 20) throw SettingsError(fmt::format("{} too small, must be >= 20", option));
  return mib > kUnlimited / kMiB ? kUnlimited : mib * kMiB;
}

uint64_t power_of_two_or_zero(const std::string& text) {
  uint64_t divisions = whole_number(text, "roundup_power2_divisions");
  if (divisions != 0 && !std::has_single_bit(divisions))
    throw SettingsError("roundup_power2_divisions: the divisions have to be a power of 2 or 0");
  return divisions;
}

// "[64:8,256:4,>:1]": from the interval of 64 MiB on 8 divisions, from 256 MiB 4, above 1. The first value also
// covers the intervals below it; ">" covers those from the last one named. A bare number covers all.
void parse_divisions(Tokens& tokens, std::array<uint64_t, kDivisionIntervals>& divisions) {
  std::string first = tokens.next("roundup_power2_divisions' value");
  if (first != "[") {
    uint64_t all = whole_number(first, "roundup_power2_divisions");
    if (!std::has_single_bit(all)) throw SettingsError("roundup_power2_divisions: the divisions have to be a power of 2");
    divisions.fill(all);
    return;
  }
  bool first_value = true;
  size_t last_index = 0;
  while (tokens.peek() != "]") {
    std::string interval = tokens.next("an interval");
    tokens.expect(':');
    uint64_t value = power_of_two_or_zero(tokens.next("divisions"));
    if (interval == ">") {
      std::fill(divisions.begin() + static_cast<ptrdiff_t>(last_index), divisions.end(), value);
    } else {
      uint64_t mib = whole_number(interval, "roundup_power2_divisions");
      if (!std::has_single_bit(mib))
        throw SettingsError("roundup_power2_divisions: the intervals have to be powers of 2");
      size_t index = std::min<size_t>(static_cast<size_t>(std::bit_width(mib) - 1), kDivisionIntervals - 1);
      if (first_value) std::fill(divisions.begin(), divisions.begin() + static_cast<ptrdiff_t>(index), value);
      first_value = false;
      divisions[index] = value;
      last_index = index;
    }
    if (tokens.peek() != "]") tokens.expect(',');
  }
  tokens.expect(']');
}

}  // namespace

std::optional<uint64_t> Settings::allowed_maximum() const {
  if (!per_process_memory_fraction) return std::nullopt;
  return static_cast<uint64_t>(*per_process_memory_fraction * static_cast<double>(device_memory));
}

uint64_t Settings::divisions_for(uint64_t size) const {
  int interval = static_cast<int>(std::bit_width(size)) - 1 - 20;
  interval = std::clamp(interval, 0, static_cast<int>(kDivisionIntervals) - 1);
  return roundup_power2_divisions[static_cast<size_t>(interval)];
}

Settings parse_alloc_conf(std::string_view conf, Settings settings) {
  Tokens tokens(conf);
  while (!tokens.done()) {
    std::string option = tokens.next("an option");
    tokens.expect(':');
    if (option == "max_split_size_mb") {
      settings.max_split_size = mebibytes_from_20(tokens.next(option), option);
    } else if (option == "max_non_split_rounding_mb") {
      settings.max_non_split_rounding_size = mebibytes_from_20(tokens.next(option), option);
    } else if (option == "large_segment_size_mb") {
      settings.large_segment_size = whole_number(tokens.next(option), option) * kMiB;
      if (settings.large_segment_size == 0) throw SettingsError("large_segment_size_mb must be at least 1");
    } else if (option == "garbage_collection_threshold") {
      double threshold = decimal(tokens.next(option), option);
      if (!(threshold > 0 && threshold < 1))
        throw SettingsError("garbage_collection_threshold is invalid, set it in (0.0, 1.0)");
      settings.garbage_collection_threshold = threshold;
    } else if (option == "roundup_power2_divisions") {
      parse_divisions(tokens, settings.roundup_power2_divisions);
    } else if (option == "expandable_segments") {
      settings.expandable_segments = true_or_false(tokens.next(option), option);
    } else if (option == "backend") {
      std::string backend = tokens.next(option);
      if (backend != "native")
        throw SettingsError(fmt::format("backend:{} is not modelled (only PyTorch's native caching allocator)", backend));
    } else if (option == "release_lock_on_cudamalloc" || option == "pinned_use_cuda_host_register" ||
               option == "pinned_use_background_threads") {
      true_or_false(tokens.next(option), option);
    } else if (option == "pinned_num_register_threads" || option == "max_round_threshold" ||
               option == "max_cached_size") {
      whole_number(tokens.next(option), option);
    } else {
      throw SettingsError(fmt::format("unrecognized CachingAllocator option: {}", option));
    }
    if (!tokens.done()) tokens.expect(',');
  }
  return settings;
}

uint64_t round_size(const Settings& settings, uint64_t size) {
  if (size < kMinBlockSize) return kMinBlockSize;
  uint64_t divisions = settings.divisions_for(size);
  if (divisions > 1 && size > kMinBlockSize * divisions) {
    if (std::has_single_bit(size)) return size;
    uint64_t floor = std::bit_floor(size);
    uint64_t step = floor >> (std::bit_width(divisions) - 1);
    if (step == 0) return floor << 1;
    uint64_t below = size & ~(step - 1);
    return below == size ? size : below + step;
  }
  return (size + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

uint64_t segment_size(const Settings& settings, uint64_t rounded) {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return settings.large_segment_size;
  return (rounded + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

}  // namespace gpumemtrace::allocator_model
