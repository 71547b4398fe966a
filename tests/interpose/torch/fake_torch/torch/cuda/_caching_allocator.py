"""A small caching allocator shaped like PyTorch's (c10/cuda/CUDACachingAllocator.cpp), for one device.

Its segments come from the simulated device's cudaMalloc/cudaFree (libcudart.so.13 through ctypes, which
releases the GIL as PyTorch's operators do), so the tracer sees them as it sees PyTorch's. What it keeps of
PyTorch's rules:
- requests are rounded up to 512 bytes; those up to 1 MiB come from 2 MiB segments (the small pool), those
  below 10 MiB from 20 MiB segments, larger ones get a segment of their own rounded up to 2 MiB;
- the best-fitting inactive block of the pool is used and split when the rest is at least 512 bytes (small
  pool) or more than 1 MiB (large pool); a freed block merges with inactive neighbours;
- when cudaMalloc fails, the segments with nothing allocated are freed and the cudaMalloc tried once more;
  if it fails again: an "oom" history entry, the out-of-memory observers with (device, segment size, device
  total, device free) after the lock is released, then torch.cuda.OutOfMemoryError;
- the lock is recursive, as PyTorch's std::recursive_mutex; stacks are gathered before taking it;
- the history is a ring buffer of max_entries entries, returned oldest first; alloc and free entries carry the
  size asked for, oom entries the rounded one;
- the snapshot's allocator_settings say what PYTORCH_CUDA_ALLOC_CONF sets (expandable_segments,
  max_split_size_mb, garbage_collection_threshold), as PyTorch reports them.
Not modelled: streams and events, several devices, private pools, and what those settings change: the segments
always come from cudaMalloc, whole, and large blocks are always split.
"""

import ctypes
import os
import sys
import threading
import time

MIN_BLOCK = 512
SMALL_SIZE = 1 << 20
SMALL_BUFFER = 2 << 20
LARGE_BUFFER = 20 << 20
MIN_LARGE_ALLOC = 10 << 20
ROUND_LARGE = 2 << 20

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class OutOfMemoryError(RuntimeError):
    pass


def log_call(line):
    """Appends a line to $FAKE_TORCH_LOG: how the test counts the calls the hook made."""
    path = os.environ.get("FAKE_TORCH_LOG")
    if path:
        with open(path, "a") as out:
            out.write(line + "\n")


def allocator_settings():
    """PYTORCH_CUDA_ALLOC_CONF ("expandable_segments:True,max_split_size_mb:512") as the snapshot's
    allocator_settings has it (c10/cuda/CUDAAllocatorConfig)."""
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    options = dict(item.split(":", 1) for item in conf.split(",") if ":" in item)
    max_split = options.get("max_split_size_mb")
    return {"PYTORCH_CUDA_ALLOC_CONF": conf,
            "max_split_size": int(float(max_split) * (1 << 20)) if max_split else -1,
            "garbage_collection_threshold": float(options.get("garbage_collection_threshold", 0.0)),
            "expandable_segments": options.get("expandable_segments") == "True"}


def round_size(size):
    return MIN_BLOCK if size < MIN_BLOCK else MIN_BLOCK * ((size + MIN_BLOCK - 1) // MIN_BLOCK)


def allocation_size(size):
    if size <= SMALL_SIZE:
        return SMALL_BUFFER
    if size < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return ROUND_LARGE * ((size + ROUND_LARGE - 1) // ROUND_LARGE)


def python_frames():
    """The caller's Python frames outside this package, innermost first, as PyTorch's snapshot lists them."""
    frames = []
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if not os.path.abspath(code.co_filename).startswith(_PACKAGE_DIR + os.sep):
            frames.append({"filename": code.co_filename, "line": frame.f_lineno, "name": code.co_name})
        frame = frame.f_back
    return frames


class _Runtime:
    def __init__(self):
        lib = ctypes.CDLL("libcudart.so.13")
        self.malloc = lib.cudaMalloc
        self.malloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
        self.malloc.restype = ctypes.c_int
        self.free = lib.cudaFree
        self.free.argtypes = [ctypes.c_void_p]
        self.free.restype = ctypes.c_int
        self.mem_get_info = lib.cudaMemGetInfo
        self.mem_get_info.argtypes = [ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)]
        self.mem_get_info.restype = ctypes.c_int


class Block:
    __slots__ = ("segment", "address", "size", "requested", "allocated", "frames")

    def __init__(self, segment, address, size):
        self.segment, self.address, self.size = segment, address, size
        self.requested, self.allocated, self.frames = 0, False, []


class Segment:
    def __init__(self, address, size, small, frames):
        self.address, self.size, self.small, self.frames = address, size, small, frames
        self.blocks = [Block(self, address, size)]  # by address, covering the segment


class CachingAllocator:
    def __init__(self):
        self.lock = threading.RLock()
        self.runtime = None
        self.segments = []
        self.observers = []
        self.history_entries = 0  # 0: no history
        self.context = None       # None, "state", "alloc", "all"
        self.trace = []
        self.trace_next = 0

    @property
    def initialized(self):
        return self.runtime is not None

    def _init(self):
        if self.runtime is None:
            self.runtime = _Runtime()

    # ---- history ----

    def record_history(self, entries, context):
        with self.lock:
            if entries == 0:
                self.history_entries, self.trace, self.trace_next = 0, [], 0
            elif entries != self.history_entries:
                self.history_entries, self.trace, self.trace_next = entries, self.ordered_trace(), 0
                del self.trace[:max(0, len(self.trace) - entries)]
            self.context = context

    def history_enabled(self):
        return self.history_entries > 0

    def _frames_for(self, when):
        """Stacks for `when` ("state": block and segment stacks; "alloc"; "free") under the context setting."""
        wanted = {"state": ("state", "alloc", "all"), "alloc": ("alloc", "all"), "free": ("all",)}[when]
        return python_frames() if self.context in wanted else []

    def _record(self, action, size, frames, addr=None, device_free=None):
        if not self.history_entries:
            return
        entry = {"action": action}
        if device_free is not None:
            entry["device_free"] = device_free
        else:
            entry["addr"] = addr
        entry.update({"size": size, "stream": 0, "time_us": time.time_ns() // 1000, "frames": frames})
        if len(self.trace) < self.history_entries:
            self.trace.append(entry)
        else:
            self.trace[self.trace_next] = entry
            self.trace_next = (self.trace_next + 1) % self.history_entries

    def ordered_trace(self):
        return self.trace[self.trace_next:] + self.trace[:self.trace_next]

    # ---- allocation ----

    def malloc(self, size):
        self._init()
        alloc_frames = self._frames_for("alloc")
        state_frames = alloc_frames or self._frames_for("state")
        requested = size
        size = round_size(size)
        small = size <= SMALL_SIZE
        with self.lock:
            block = self._best_fit(size, small)
            if block is None:
                block, oom = self._new_segment(size, small, state_frames, alloc_frames)
                if oom is not None:
                    self.lock.release()  # observers run without the lock, as PyTorch's do
                    try:
                        for observer in list(self.observers):
                            observer(*oom)
                    finally:
                        self.lock.acquire()
                    raise OutOfMemoryError(
                        "CUDA out of memory. Tried to allocate %d bytes. GPU %d has a total capacity of %d bytes "
                        "of which %d bytes is free." % (requested, oom[0], oom[2], oom[3]))
            rest = block.size - size
            if rest >= MIN_BLOCK if small else rest > SMALL_SIZE:
                index = block.segment.blocks.index(block)
                block.segment.blocks.insert(index + 1, Block(block.segment, block.address + size, rest))
                block.size = size
            block.allocated, block.requested, block.frames = True, requested, state_frames
            self._record("alloc", requested, alloc_frames, addr=block.address)
            return block.address

    def _best_fit(self, size, small):
        best = None
        for segment in self.segments:
            if segment.small != small:
                continue
            for block in segment.blocks:
                if not block.allocated and block.size >= size and (best is None or block.size < best.size):
                    best = block
        return best

    def _new_segment(self, size, small, state_frames, alloc_frames):
        """A new segment's one block, and None; or None and the observers' arguments when CUDA refused."""
        segment_size = allocation_size(size)
        pointer = ctypes.c_void_p()
        if self.runtime.malloc(ctypes.byref(pointer), segment_size) != 0:
            self._release_cached()
            if self.runtime.malloc(ctypes.byref(pointer), segment_size) != 0:
                free, total = ctypes.c_size_t(), ctypes.c_size_t()
                self.runtime.mem_get_info(ctypes.byref(free), ctypes.byref(total))
                self._record("oom", size, alloc_frames, device_free=free.value)
                return None, (0, segment_size, total.value, free.value)
        segment = Segment(pointer.value, segment_size, small, state_frames)
        self.segments.append(segment)
        self._record("segment_alloc", segment_size, alloc_frames, addr=segment.address)
        return segment.blocks[0], None

    def free(self, address):
        free_frames = self._frames_for("free")
        with self.lock:
            block = self._allocated_block(address)
            requested = block.requested
            self._record("free_requested", requested, free_frames, addr=address)
            block.allocated, block.frames = False, []
            blocks = block.segment.blocks
            index = blocks.index(block)
            if index + 1 < len(blocks) and not blocks[index + 1].allocated:
                block.size += blocks.pop(index + 1).size
            if index > 0 and not blocks[index - 1].allocated:
                blocks[index - 1].size += blocks.pop(index).size
            self._record("free_completed", requested, free_frames, addr=address)

    def _allocated_block(self, address):
        for segment in self.segments:
            for block in segment.blocks:
                if block.address == address and block.allocated:
                    return block
        raise RuntimeError("invalid device pointer: %#x" % address)

    def _release_cached(self):
        for segment in [s for s in self.segments if len(s.blocks) == 1 and not s.blocks[0].allocated]:
            self._record("segment_free", segment.size, [], addr=segment.address)
            self.runtime.free(segment.address)
            self.segments.remove(segment)

    def empty_cache(self):
        with self.lock:
            if self.runtime is not None:
                self._release_cached()

    # ---- state ----

    def allocated_bytes(self):
        return sum(b.size for s in self.segments for b in s.blocks if b.allocated)

    def reserved_bytes(self):
        return sum(s.size for s in self.segments)

    def snapshot(self):
        with self.lock:
            segments = [self._segment_dict(s) for s in sorted(self.segments, key=lambda s: s.address)]
            return {
                "segments": segments,
                "device_traces": [self.ordered_trace()],
                "allocator_settings": allocator_settings(),
                "external_annotations": [],
            }

    @staticmethod
    def _segment_dict(segment):
        allocated = [b for b in segment.blocks if b.allocated]
        return {
            "device": 0,
            "address": segment.address,
            "total_size": segment.size,
            "allocated_size": sum(b.size for b in allocated),
            "active_size": sum(b.size for b in allocated),
            "requested_size": sum(b.requested for b in allocated),
            "stream": 0,
            "segment_type": "small" if segment.small else "large",
            "segment_pool_id": (0, 0),
            "is_expandable": False,
            "frames": segment.frames,
            "blocks": [{"address": b.address, "size": b.size, "requested_size": b.requested,
                        "state": "active_allocated" if b.allocated else "inactive", "frames": b.frames}
                       for b in segment.blocks],
        }


ALLOCATOR = CachingAllocator()
