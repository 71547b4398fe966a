// A training loop in miniature, the shape of a real one as far as GPU memory goes: parameters allocated
// once, optimizer state on the first step, activations and gradients that live for one step, an
// evaluation pass now and then, and a per-step loss kept "for logging" the way `total_loss += loss`
// keeps every step's autograd graph alive.
//
// Each step is marked with NVTX ranges, as frameworks do: `forward`, `backward`, `optimizer` and, every
// --eval-every steps, `validation` (`gpumemtrace phases` reports memory by phase). Activations and gradients
// come from a caching allocator like PyTorch's (caching_allocator.h), which reports its segments and blocks
// through the NVTX memory extension; parameters, optimizer state and the loss history are plain cudaMalloc.
//
// Activations grow with the batch: the default batch of 32 peaks at about 140 MiB (of it 42 MiB of cache
// segments), and --batch 8192 runs out of memory on a 4 GiB device in the first forward pass (8 layers x
// 512 MiB of activations).
//
// --fragment makes the sequence length change from step to step (16, 24, 32, 40 tokens, again and again)
// and keeps the last layer's activations of every step (an output kept for logging). The kept blocks pin
// the cache's segments, and the holes between them are the wrong sizes for the next steps, so the cache
// keeps asking the device for new segments until one request fails, although the cache holds more free
// memory than the request: `gpumemtrace oom` says "fragmentation".
//
//   train_loop [--steps N] [--batch N] [--layers N] [--eval-every N] [--fragment]
#include <cuda_runtime_api.h>
#include <nvtx3/nvtx3.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "caching_allocator.h"

namespace {

struct Options {
  int steps = 20;
  int batch = 32;
  int layers = 8;
  int eval_every = 5;
  bool fragment = false;
};

constexpr size_t kHidden = 1024;  // elements per activation row
constexpr size_t kFloat = 4;
constexpr size_t kTokens = 16;  // activation rows per sample
constexpr double kMiB = 1 << 20;

CachingAllocator* g_cache = nullptr;

[[noreturn]] void die_of(cudaError_t rc, const char* what, size_t bytes) {
  size_t free_bytes = 0, total_bytes = 0;
  cudaMemGetInfo(&free_bytes, &total_bytes);
  std::fprintf(stderr,
               "train_loop: CUDA out of memory (%s): tried to allocate %.2f MiB; %.2f MiB free of %.2f MiB total "
               "[%s]\n",
               what, bytes / kMiB, free_bytes / kMiB, total_bytes / kMiB, cudaGetErrorName(rc));
  if (g_cache)
    std::fprintf(stderr, "train_loop: the cache holds %.2f MiB, %.2f MiB of it in blocks; its largest free block is %.2f MiB\n",
                 g_cache->reserved_bytes() / kMiB, g_cache->allocated_bytes() / kMiB,
                 g_cache->largest_free_block() / kMiB);
  std::exit(1);
}

void* device_alloc(size_t bytes, const char* what) {
  void* ptr = nullptr;
  cudaError_t rc = cudaMalloc(&ptr, bytes);
  if (rc != cudaSuccess) die_of(rc, what, bytes);
  return ptr;
}

void* cached_alloc(CachingAllocator& cache, size_t bytes, const char* what) {
  void* ptr = cache.allocate(bytes, what);
  if (!ptr) die_of(cudaErrorMemoryAllocation, what, bytes);
  return ptr;
}

struct Model {
  std::vector<void*> weights;
  std::vector<void*> adam_m, adam_v;
};

__attribute__((noinline)) Model allocate_parameters(int layers) {
  Model model;
  for (int i = 0; i < layers; ++i) model.weights.push_back(device_alloc(kHidden * kHidden * kFloat, "parameters"));
  return model;
}

__attribute__((noinline)) void create_optimizer_state(Model& model) {
  for (size_t i = 0; i < model.weights.size(); ++i) {
    model.adam_m.push_back(device_alloc(kHidden * kHidden * kFloat, "optimizer state"));
    model.adam_v.push_back(device_alloc(kHidden * kHidden * kFloat, "optimizer state"));
  }
}

__attribute__((noinline)) std::vector<void*> forward(CachingAllocator& cache, const Model& model, int batch,
                                                     size_t tokens) {
  std::vector<void*> activations;
  for (size_t i = 0; i < model.weights.size(); ++i)
    activations.push_back(cached_alloc(cache, static_cast<size_t>(batch) * tokens * kHidden * kFloat, "activations"));
  return activations;
}

// Frees each layer's activations once its gradients are computed, but those of `kept` (none: -1).
__attribute__((noinline)) void backward(CachingAllocator& cache, const Model& model, std::vector<void*>& activations,
                                        int kept) {
  for (size_t i = model.weights.size(); i-- > 0;) {
    void* weight_grad = cached_alloc(cache, kHidden * kHidden * kFloat, "weight gradient");
    void* bias_grad = cached_alloc(cache, kHidden * kFloat, "bias gradient");
    if (static_cast<int>(i) != kept) cache.release(activations[i]);
    cache.release(weight_grad);
    cache.release(bias_grad);
  }
  activations.clear();
}

// Without no_grad: every layer's activations stay until the pass ends.
__attribute__((noinline)) void evaluate(CachingAllocator& cache, const Model& model, int batch, size_t tokens) {
  std::vector<void*> activations = forward(cache, model, batch, tokens);
  for (void* a : activations) cache.release(a);
}

// The bug: each step's loss stays referenced, so its memory is never released.
__attribute__((noinline)) void accumulate_loss(std::vector<void*>& history) {
  history.push_back(device_alloc(64 * 1024, "loss history"));
}

// Tokens per sample at `step`: always kTokens, or with --fragment 16, 24, 32, 40, 16, ...
size_t sequence_length(const Options& options, int step) {
  return options.fragment ? kTokens + kTokens / 2 * ((step - 1) % 4) : kTokens;
}

bool parse(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--fragment") {
      options.fragment = true;
      continue;
    }
    int* target = arg == "--steps"        ? &options.steps
                  : arg == "--batch"      ? &options.batch
                  : arg == "--layers"     ? &options.layers
                  : arg == "--eval-every" ? &options.eval_every
                                          : nullptr;
    if (!target || i + 1 == argc || std::atoi(argv[i + 1]) <= 0) {
      std::fprintf(stderr, "usage: train_loop [--steps N] [--batch N] [--layers N] [--eval-every N] [--fragment]\n");
      return false;
    }
    *target = std::atoi(argv[++i]);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, options)) return 2;
  if (cudaSetDevice(0) != cudaSuccess) {
    std::fprintf(stderr, "train_loop: no CUDA device\n");
    return 1;
  }
  CachingAllocator cache;
  g_cache = &cache;
  Model model = allocate_parameters(options.layers);
  std::vector<void*> loss_history;
  // --fragment keeps the last layer's activations of every step (never freed, like the loss history).
  int kept = options.fragment ? options.layers - 1 : -1;
  int steps = options.fragment ? 1 << 30 : options.steps;  // --fragment runs until memory runs out
  for (int step = 1; step <= steps; ++step) {
    size_t tokens = sequence_length(options, step);
    std::vector<void*> activations;
    {
      nvtx3::scoped_range phase{"forward"};
      activations = forward(cache, model, options.batch, tokens);
      accumulate_loss(loss_history);
    }
    {
      nvtx3::scoped_range phase{"backward"};
      backward(cache, model, activations, kept);
    }
    {
      nvtx3::scoped_range phase{"optimizer"};
      if (step == 1) create_optimizer_state(model);
    }
    if (step % options.eval_every == 0) {
      nvtx3::scoped_range phase{"validation"};
      evaluate(cache, model, options.batch * 2, tokens);
    }
  }
  size_t free_bytes = 0, total_bytes = 0;
  cudaMemGetInfo(&free_bytes, &total_bytes);
  std::printf("train_loop: %d steps, batch %d, %d layers; %.1f MiB free of %.1f MiB; the cache holds %.1f MiB\n",
              options.steps, options.batch, options.layers, free_bytes / kMiB, total_bytes / kMiB,
              cache.reserved_bytes() / kMiB);
  for (void* w : model.weights) cudaFree(w);
  for (void* m : model.adam_m) cudaFree(m);
  for (void* v : model.adam_v) cudaFree(v);
  return 0;  // loss_history is never freed
}
