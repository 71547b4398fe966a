// A training loop in miniature, the shape of a real one as far as GPU memory goes: parameters allocated
// once, optimizer state on the first step, activations and gradients that live for one step, an
// evaluation pass now and then, and a per-step loss kept "for logging" the way `total_loss += loss`
// keeps every step's autograd graph alive. Activations grow with the batch: the default batch of 32 needs
// about 120 MiB at its peak, and --batch 8192 runs out of memory on a 4 GiB device in the first forward
// pass (8 layers x 512 MiB of activations).
//
//   train_loop [--steps N] [--batch N] [--layers N] [--eval-every N]
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Options {
  int steps = 20;
  int batch = 32;
  int layers = 8;
  int eval_every = 5;
};

constexpr size_t kHidden = 1024;  // elements per activation row
constexpr size_t kFloat = 4;
constexpr size_t kTokens = 16;     // activation rows per sample

[[noreturn]] void die_of(cudaError_t rc, const char* what, size_t bytes) {
  size_t free_bytes = 0, total_bytes = 0;
  cudaMemGetInfo(&free_bytes, &total_bytes);
  std::fprintf(stderr,
               "train_loop: CUDA out of memory (%s): tried to allocate %.2f MiB; %.2f MiB free of %.2f MiB total "
               "[%s]\n",
               what, bytes / 1048576.0, free_bytes / 1048576.0, total_bytes / 1048576.0, cudaGetErrorName(rc));
  std::exit(1);
}

void* device_alloc(size_t bytes, const char* what) {
  void* ptr = nullptr;
  cudaError_t rc = cudaMalloc(&ptr, bytes);
  if (rc != cudaSuccess) die_of(rc, what, bytes);
  return ptr;
}

void* stream_alloc(size_t bytes, cudaStream_t stream, const char* what) {
  void* ptr = nullptr;
  cudaError_t rc = cudaMallocAsync(&ptr, bytes, stream);
  if (rc != cudaSuccess) die_of(rc, what, bytes);
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

__attribute__((noinline)) std::vector<void*> forward(const Model& model, int batch, cudaStream_t stream) {
  std::vector<void*> activations;
  for (size_t i = 0; i < model.weights.size(); ++i) {
    activations.push_back(stream_alloc(static_cast<size_t>(batch) * kTokens * kHidden * kFloat, stream, "activations"));
  }
  return activations;
}

__attribute__((noinline)) void backward(const Model& model, std::vector<void*>& activations, cudaStream_t stream) {
  for (size_t i = model.weights.size(); i-- > 0;) {
    void* grad = stream_alloc(kHidden * kHidden * kFloat, stream, "gradients");
    cudaFreeAsync(activations[i], stream);
    cudaFreeAsync(grad, stream);
  }
  activations.clear();
}

__attribute__((noinline)) void evaluate(const Model& model, int batch, cudaStream_t stream) {
  std::vector<void*> activations = forward(model, batch, stream);
  for (void* a : activations) cudaFreeAsync(a, stream);
}

// The bug: each step's loss stays referenced, so its memory is never released.
__attribute__((noinline)) void accumulate_loss(std::vector<void*>& history) {
  history.push_back(device_alloc(64 * 1024, "loss history"));
}

bool parse(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    int* target = arg == "--steps"        ? &options.steps
                  : arg == "--batch"      ? &options.batch
                  : arg == "--layers"     ? &options.layers
                  : arg == "--eval-every" ? &options.eval_every
                                          : nullptr;
    if (!target || i + 1 == argc || std::atoi(argv[i + 1]) <= 0) {
      std::fprintf(stderr, "usage: train_loop [--steps N] [--batch N] [--layers N] [--eval-every N]\n");
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
  cudaStream_t stream = nullptr;
  if (cudaStreamCreate(&stream) != cudaSuccess) {
    std::fprintf(stderr, "train_loop: no CUDA device\n");
    return 1;
  }
  Model model = allocate_parameters(options.layers);
  std::vector<void*> loss_history;
  for (int step = 1; step <= options.steps; ++step) {
    std::vector<void*> activations = forward(model, options.batch, stream);
    backward(model, activations, stream);
    if (step == 1) create_optimizer_state(model);
    accumulate_loss(loss_history);
    if (step % options.eval_every == 0) evaluate(model, options.batch * 2, stream);
    cudaStreamSynchronize(stream);
  }
  size_t free_bytes = 0, total_bytes = 0;
  cudaMemGetInfo(&free_bytes, &total_bytes);
  std::printf("train_loop: %d steps, batch %d, %d layers; %.1f MiB free of %.1f MiB\n", options.steps,
              options.batch, options.layers, free_bytes / 1048576.0, total_bytes / 1048576.0);
  for (void* w : model.weights) cudaFree(w);
  for (void* m : model.adam_m) cudaFree(m);
  for (void* v : model.adam_v) cudaFree(v);
  cudaStreamDestroy(stream);
  return 0;  // loss_history is never freed
}
