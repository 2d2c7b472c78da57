// Several streams at once: each chunk of a buffer is copied in, transformed by a kernel and
// copied out on its own stream, from pinned memory, so the copies of one stream overlap the
// kernels of another. First argument: rounds over the buffer (default 4). Prints how many
// launches and copies it made.
#include <cstdlib>

#include "check.h"

__global__ void scale(float* data, int n, int work) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = data[i];
  for (int k = 0; k < work; ++k) v = v * 1.0001f + 0.5f;  // long enough to overlap a copy
  data[i] = v;
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 4;
  constexpr int kStreams = 4, kChunks = 16, kChunk = 1 << 18;
  const size_t chunkBytes = kChunk * sizeof(float);
  float* host;
  float* device;
  CHECK(cudaMallocHost(&host, chunkBytes * kChunks));
  CHECK(cudaMalloc(&device, chunkBytes * kChunks));
  for (int i = 0; i < kChunk * kChunks; ++i) host[i] = 1.0f;
  cudaStream_t streams[kStreams];
  for (auto& s : streams) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  int launches = 0, copiesIn = 0, copiesOut = 0;
  for (int r = 0; r < rounds; ++r) {
    for (int c = 0; c < kChunks; ++c) {
      cudaStream_t s = streams[c % kStreams];
      float* h = host + c * kChunk;
      float* d = device + c * kChunk;
      CHECK(cudaMemcpyAsync(d, h, chunkBytes, cudaMemcpyHostToDevice, s));  // @copy:in
      ++copiesIn;
      scale<<<kChunk / 256, 256, 0, s>>>(d, kChunk, 64);  // @launch:scale
      ++launches;
      CHECK(cudaMemcpyAsync(h, d, chunkBytes, cudaMemcpyDeviceToHost, s));  // @copy:out
      ++copiesOut;
    }
  }
  for (auto& s : streams) CHECK(cudaStreamSynchronize(s));  // @sync:streams
  CHECK(cudaGetLastError());
  for (auto& s : streams) CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(device));
  CHECK(cudaFreeHost(host));
  std::printf("streams: %d launches of scale, %d copies in, %d copies out, on %d streams\n", launches, copiesIn,
              copiesOut, kStreams);
  return 0;
}
