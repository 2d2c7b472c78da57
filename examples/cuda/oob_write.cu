// An out-of-bounds write: the kernel's index is multiplied by a stride that should be 1, so
// all threads but the first write gigabytes past the end of a 4 KiB buffer. The launch itself
// succeeds; the fault surfaces at the next synchronizing call, cudaDeviceSynchronize below,
// as cudaErrorIllegalAddress (700). A debugger should stop there, naming the kernel.
#include "check.h"

__global__ void fill(int* out, long long stride) {
  long long i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i * stride] = static_cast<int>(i);  // the bug: stride is not 1
}

int main() {
  const int n = 1024;
  int* d;
  CHECK(cudaMalloc(&d, n * sizeof(int)));
  fill<<<n / 256, 256>>>(d, 1ll << 22);  // @launch:fill
  CHECK(cudaGetLastError());             // the launch was fine
  cudaError_t err = cudaDeviceSynchronize();  // @error:sync
  std::printf("oob_write: cudaDeviceSynchronize returned %s (%d)\n", cudaGetErrorName(err), static_cast<int>(err));
  return err == cudaSuccess ? 0 : 1;
}
