// Vector add, the smallest CUDA program: copies two vectors in, launches one kernel N times
// (first argument, default 10), copies the result out, checks it, and says how many launches
// it made so a collector's kernel count can be compared with it.
#include <cstdlib>
#include <vector>

#include "check.h"

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main(int argc, char** argv) {
  const int launches = argc > 1 ? std::atoi(argv[1]) : 10;
  const int n = 1 << 20;
  const size_t bytes = n * sizeof(float);
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) a[i] = static_cast<float>(i), b[i] = 2.0f * i;

  float *da, *db, *dc;
  CHECK(cudaMalloc(&da, bytes));
  CHECK(cudaMalloc(&db, bytes));
  CHECK(cudaMalloc(&dc, bytes));
  CHECK(cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice));  // @copy:a
  CHECK(cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice));  // @copy:b
  for (int i = 0; i < launches; ++i) {
    vector_add<<<(n + 255) / 256, 256>>>(da, db, dc, n);  // @launch:vector_add
  }
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost));  // @copy:c
  bool right = true;
  for (int i = 0; i < n && right; ++i) right = c[i] == a[i] + b[i];
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
  std::printf("vector_add: %d launches of vector_add, result %s\n", launches, right ? "right" : "WRONG");
  return right ? 0 : 1;
}
