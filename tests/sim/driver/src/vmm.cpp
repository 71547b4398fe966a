// Virtual memory management. Physical memory (cuMemCreate) is a memfd charged to its device until the handle is
// released and its last mapping is gone; an address reservation (cuMemAddressReserve) is PROT_NONE address space
// and is not memory; cuMemMap maps the memfd at the reserved address (MAP_SHARED|MAP_FIXED, so two mappings of a
// handle alias and copies through a mapping work) and cuMemUnmap puts PROT_NONE address space back.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "state.h"

using namespace gpumemtrace::sim;

namespace {

struct Phys {
  uint64_t size;
  Device* dev;
  int fd;
  CUmemAllocationProp prop;
  uint64_t id;
  int refs = 1;      // cuMemCreate and cuMemRetainAllocationHandle take one; cuMemRelease drops one
  int mappings = 0;
};

struct Mapping {
  uint64_t size;
  Phys* phys;
  uint64_t offset;
  std::array<CUmemAccess_flags, kMaxDevices> access{};
};

struct Vmm {
  std::mutex mu;  // taken before a device's mu, never after
  std::map<uintptr_t, uint64_t> reservations;  // base -> size
  std::map<uintptr_t, Mapping> mappings;       // address -> mapping
  std::set<Phys*> handles;
};

Vmm& vmm() {
  static auto* v = new Vmm;
  return *v;
}

Phys* handle_of(Vmm& v, CUmemGenericAllocationHandle handle) {
  auto* phys = reinterpret_cast<Phys*>(static_cast<uintptr_t>(handle));
  return v.handles.count(phys) ? phys : nullptr;
}

// Frees physical memory once nothing holds it (v.mu held).
void maybe_destroy(Vmm& v, Phys* phys) {
  if (phys->refs > 0 || phys->mappings > 0) return;
  {
    std::lock_guard lock(phys->dev->mu);
    phys->dev->uncharge(phys->size);
  }
  close(phys->fd);
  v.handles.erase(phys);
  delete phys;
}

uint64_t size_of(uint64_t size) { return size; }
uint64_t size_of(const Mapping& m) { return m.size; }

template <typename Map>
typename Map::iterator containing(Map& map, uintptr_t p) {
  auto it = map.upper_bound(p);
  if (it == map.begin()) return map.end();
  --it;
  return p - it->first < size_of(it->second) ? it : map.end();
}

bool aligned(uint64_t v) { return v % kVmmGranularity == 0; }

// The device a VMM property names, or nullptr with *err set.
Device* prop_device(const CUmemAllocationProp* prop, CUresult* err) {
  if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE) {
    *err = CUDA_ERROR_INVALID_VALUE;
    return nullptr;
  }
  Device* dev = device(prop->location.id);
  if (!dev) *err = CUDA_ERROR_INVALID_DEVICE;
  return dev;
}

// The mappings that exactly tile [ptr, ptr+size), first to last; false if there is a hole or a mapping sticks out.
template <typename F>
bool for_each_mapping_tiling(Vmm& v, uintptr_t ptr, uint64_t size, F&& f) {
  uintptr_t end = ptr + size, at = ptr;
  std::vector<std::map<uintptr_t, Mapping>::iterator> found;
  for (auto it = v.mappings.find(ptr); at < end; ++it) {
    if (it == v.mappings.end() || it->first != at || it->second.size > end - at) return false;
    found.push_back(it);
    at += it->second.size;
  }
  for (auto it : found) f(it);
  return true;
}

void unmap_range(Vmm& v, uintptr_t ptr, uint64_t size) {
  std::vector<Phys*> touched;
  for (auto it = v.mappings.lower_bound(ptr); it != v.mappings.end() && it->first < ptr + size;) {
    it->second.phys->mappings--;
    touched.push_back(it->second.phys);
    it = v.mappings.erase(it);
  }
  mmap(reinterpret_cast<void*>(ptr), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  for (Phys* phys : touched)
    if (v.handles.count(phys)) maybe_destroy(v, phys);
}

}  // namespace

namespace gpumemtrace::sim {

bool lookup_vmm(uintptr_t p, PointerInfo* info) {
  Vmm& v = vmm();
  std::lock_guard lock(v.mu);
  auto it = containing(v.mappings, p);
  if (it == v.mappings.end()) return false;
  info->type = CU_MEMORYTYPE_DEVICE;
  info->base = it->first;
  info->size = it->second.size;
  info->device = it->second.phys->dev->ordinal;
  info->id = it->second.phys->id;
  info->vmm = true;
  return true;
}

bool vmm_range_mapped(uintptr_t p, size_t n) {
  Vmm& v = vmm();
  std::lock_guard lock(v.mu);
  auto it = containing(v.mappings, p);
  if (it == v.mappings.end()) return false;
  // Mappings that follow one another without a gap are one range of address space for a copy.
  for (uintptr_t end = it->first + it->second.size; n > end - p; end = it->first + it->second.size) {
    if (++it == v.mappings.end() || it->first != end) return false;
  }
  return true;
}

bool lookup_vmm_reservation(uintptr_t p) {
  Vmm& v = vmm();
  std::lock_guard lock(v.mu);
  return containing(v.reservations, p) != v.reservations.end();
}

}  // namespace gpumemtrace::sim

CUAPI cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                    CUmemAllocationGranularity_flags option) {
  SIM_REQUIRE_INIT();
  CUresult err = CUDA_SUCCESS;
  if (!granularity ||
      (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
    return CUDA_ERROR_INVALID_VALUE;
  if (!prop_device(prop, &err)) return err;
  *granularity = kVmmGranularity;
  return CUDA_SUCCESS;
}

CUAPI cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop,
                  unsigned long long flags) {
  SIM_REQUIRE_INIT();
  CUresult err = CUDA_SUCCESS;
  if (!handle || flags != 0 || size == 0 || !aligned(size)) return CUDA_ERROR_INVALID_VALUE;
  Device* dev = prop_device(prop, &err);
  if (!dev) return err;
  {
    std::lock_guard lock(dev->mu);
    if (!dev->charge(size)) return CUDA_ERROR_OUT_OF_MEMORY;
  }
  int fd = memfd_create("gpumemtrace-sim-vmm", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(size)) != 0) {
    if (fd >= 0) close(fd);
    std::lock_guard lock(dev->mu);
    dev->uncharge(size);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  auto* phys = new Phys{size, dev, fd, *prop, next_id()};
  Vmm& v = vmm();
  std::lock_guard lock(v.mu);
  v.handles.insert(phys);
  *handle = reinterpret_cast<uintptr_t>(phys);
  return CUDA_SUCCESS;
}

CUAPI cuMemRelease(CUmemGenericAllocationHandle handle) {
  SIM_REQUIRE_INIT();
  Vmm& v = vmm();
  std::lock_guard lock(v.mu);
  Phys* phys = handle_of(v, handle);
  if (!phys || phys->refs == 0) return CUDA_ERROR_INVALID_VALUE;
  phys->refs--;
  maybe_destroy(v, phys);
  return CUDA_SUCCESS;
}

CUAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr) {
  SIM_REQUIRE_INIT();
  if (!handle) return CUDA_ERROR_INVALID_VALUE;
  Vmm& v = vmm();
  std::lock_guard lock(v.mu);
  auto it = containing(v.mappings, reinterpret_cast<uintptr_t>(addr));
  if (it == v.mappings.end()) return CUDA_ERROR_INVALID_VALUE;
  it->second.phys->refs++;
  *handle = reinterpret_cast<uintptr_t>(it->second.phys);
  return CUDA_SUCCESS;
}

CUAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop, CUmemGenericAllocationHandle handle) {
  SIM_REQUIRE_INIT();
  if (!prop) return CUDA_ERROR_INVALID_VALUE;
  Vmm& v = vmm();
  std::lock_guard lock(v.mu);
  Phys* phys = handle_of(v, handle);
  if (!phys) return CUDA_ERROR_INVALID_VALUE;
  *prop = phys->prop;
  return CUDA_SUCCESS;
}

CUAPI cuMemExportToShareableHandle(void* shareableHandle, CUmemGenericAllocationHandle handle,
                                   CUmemAllocationHandleType handleType, unsigned long long flags) {
  SIM_REQUIRE_INIT();
  if (!shareableHandle || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  Vmm& v = vmm();
  std::lock_guard lock(v.mu);
  Phys* phys = handle_of(v, handle);
  if (!phys) return CUDA_ERROR_INVALID_VALUE;
  if (handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
      !(phys->prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
    return CUDA_ERROR_NOT_SUPPORTED;
  int fd = dup(phys->fd);
  if (fd < 0) return CUDA_ERROR_OPERATING_SYSTEM;
  *static_cast<int*>(shareableHandle) = fd;
  return CUDA_SUCCESS;
}

// Only a handle this process exported imports (the device is not shared between processes): the same physical
// memory, one more reference, as the real driver gives.
CUAPI cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle, void* osHandle,
                                     CUmemAllocationHandleType shHandleType) {
  SIM_REQUIRE_INIT();
  if (!handle) return CUDA_ERROR_INVALID_VALUE;
  if (shHandleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_NOT_SUPPORTED;
  struct stat imported {};
  if (fstat(static_cast<int>(reinterpret_cast<intptr_t>(osHandle)), &imported) != 0) return CUDA_ERROR_INVALID_VALUE;
  Vmm& v = vmm();
  std::lock_guard lock(v.mu);
  for (Phys* phys : v.handles) {
    struct stat ours {};
    if (fstat(phys->fd, &ours) == 0 && ours.st_dev == imported.st_dev && ours.st_ino == imported.st_ino) {
      phys->refs++;
      *handle = reinterpret_cast<uintptr_t>(phys);
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUAPI cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                          unsigned long long flags) {
  SIM_REQUIRE_INIT();
  if (!ptr || size == 0 || !aligned(size) || (alignment & (alignment - 1)) != 0 || flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t align = std::max<uint64_t>(alignment, kVmmGranularity);
  constexpr int kProt = PROT_NONE;
  constexpr int kFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  uintptr_t base = 0;
  if (addr && addr % align == 0) {  // the requested address, if it is free
    void* p = mmap(reinterpret_cast<void*>(addr), size, kProt, kFlags | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != MAP_FAILED) base = reinterpret_cast<uintptr_t>(p);
  }
  if (!base) {  // over-reserve, then trim to an aligned range
    void* p = mmap(nullptr, size + align, kProt, kFlags, -1, 0);
    if (p == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    uintptr_t raw = reinterpret_cast<uintptr_t>(p);
    base = round_up(raw, align);
    if (base > raw) munmap(p, base - raw);
    if (raw + size + align > base + size) munmap(reinterpret_cast<void*>(base + size), raw + size + align - base - size);
  }
  Vmm& v = vmm();
  std::lock_guard lock(v.mu);
  v.reservations[base] = size;
  *ptr = base;
  return CUDA_SUCCESS;
}

CUAPI cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  SIM_REQUIRE_INIT();
  Vmm& v = vmm();
  std::lock_guard lock(v.mu);
  auto it = v.reservations.find(ptr);
  if (it == v.reservations.end() || it->second != size) return CUDA_ERROR_INVALID_VALUE;
  unmap_range(v, ptr, size);  // mappings left inside are dropped
  munmap(reinterpret_cast<void*>(ptr), size);
  v.reservations.erase(it);
  return CUDA_SUCCESS;
}

CUAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
               unsigned long long flags) {
  SIM_REQUIRE_INIT();
  if (flags != 0 || size == 0 || !aligned(ptr) || !aligned(size) || !aligned(offset)) return CUDA_ERROR_INVALID_VALUE;
  Vmm& v = vmm();
  std::lock_guard lock(v.mu);
  Phys* phys = handle_of(v, handle);
  if (!phys || phys->refs == 0 || offset > phys->size || size > phys->size - offset) return CUDA_ERROR_INVALID_VALUE;
  auto res = containing(v.reservations, ptr);
  if (res == v.reservations.end() || size > res->first + res->second - ptr) return CUDA_ERROR_INVALID_VALUE;
  auto next = v.mappings.lower_bound(ptr);
  if ((next != v.mappings.end() && next->first < ptr + size) || containing(v.mappings, ptr) != v.mappings.end())
    return CUDA_ERROR_INVALID_VALUE;  // already mapped
  void* p = mmap(reinterpret_cast<void*>(ptr), size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, phys->fd,
                 static_cast<off_t>(offset));
  if (p == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  v.mappings[ptr] = Mapping{size, phys, offset};
  phys->mappings++;
  return CUDA_SUCCESS;
}

CUAPI cuMemUnmap(CUdeviceptr ptr, size_t size) {
  SIM_REQUIRE_INIT();
  if (size == 0) return CUDA_ERROR_INVALID_VALUE;
  Vmm& v = vmm();
  std::lock_guard lock(v.mu);
  if (!for_each_mapping_tiling(v, ptr, size, [](auto) {})) return CUDA_ERROR_INVALID_VALUE;
  unmap_range(v, ptr, size);
  return CUDA_SUCCESS;
}

CUAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count) {
  SIM_REQUIRE_INIT();
  if (size == 0 || !desc || count == 0) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; i++) {
    if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
    if (!device(desc[i].location.id)) return CUDA_ERROR_INVALID_DEVICE;
    if (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE && desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
        desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
      return CUDA_ERROR_INVALID_VALUE;
  }
  Vmm& v = vmm();
  std::lock_guard lock(v.mu);
  bool ok = for_each_mapping_tiling(v, ptr, size, [&](auto it) {
    for (size_t i = 0; i < count; i++) it->second.access[desc[i].location.id] = desc[i].flags;
  });
  return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUAPI cuMemGetAccess(unsigned long long* flags, const CUmemLocation* location, CUdeviceptr ptr) {
  SIM_REQUIRE_INIT();
  if (!flags || !location || location->type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
  if (!device(location->id)) return CUDA_ERROR_INVALID_DEVICE;
  Vmm& v = vmm();
  std::lock_guard lock(v.mu);
  auto it = containing(v.mappings, ptr);
  if (it == v.mappings.end()) return CUDA_ERROR_INVALID_VALUE;
  *flags = it->second.access[location->id];
  return CUDA_SUCCESS;
}
