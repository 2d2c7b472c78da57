"""The Python side of the GPU store tests/targets/gpu/make_gpu_store.cpp writes: its launch
sites name these lines (as a CUDA program's collector would), so gpuKernel's frames open here."""


def launch_gemm(a, b):
    return a @ b  # @bp:launch_gemm


def train_step(batch):
    out = launch_gemm(batch, batch)  # @bp:train_step
    return out


def main():
    for step in range(3):
        train_step([[step]])  # @bp:main_loop


if __name__ == "__main__":
    main()  # @bp:module
