#!/usr/bin/env python3
"""Writes a torch.profiler/Kineto chrome trace of N events, shaped as torch.profiler writes
them: deviceProperties first, then traceEvents (per op: a cpu_op, its cudaLaunchKernel, the
kernel on one of 4 streams and the ac2g flow pair; every 8th op a copy instead), then
baseTimeNanoseconds last. Times are relative µs with three decimals, as Kineto writes them.

    gen_kineto.py OUT.json [--events 1000000] [--gzip]
"""
import argparse
import gzip
import random

DEVICE = """  "deviceProperties": [
    {
      "id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85045379072,
      "computeMajor": 9, "computeMinor": 0,
      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
      "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32,
      "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 233472,
      "numSms": 132, "sharedMemPerBlockOptin": 232448
    }
  ],
"""

KERNELS = [
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
    "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, "
    "unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)",
    "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>(cudnnTensorStruct, float const*, cudnnTensorStruct, float*)",
    "triton_poi_fused_add_mul_0",
    "void at::native::(anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>(float*, float const*, int, int, int, bool const*, int, bool)",
]
OPS = ["aten::add", "aten::mm", "aten::mean", "aten::batch_norm", "aten::mul", "aten::softmax"]


def us(ns):
    return "%d.%03d" % (ns // 1000, ns % 1000)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--gzip", action="store_true")
    args = ap.parse_args()
    rng = random.Random(7)
    opener = (lambda p: gzip.open(p, "wt", compresslevel=6)) if args.gzip else (lambda p: open(p, "w"))
    pid, tid = 41230, 41230
    t = 1_000_000  # ns after the base
    stream_free = [0, 0, 0, 0]
    written = 0
    corr = 0
    with opener(args.out) as f:
        f.write('{\n  "schemaVersion": 1,\n' + DEVICE + '  "traceEvents": [\n')
        first = True
        buf = []
        while written < args.events:
            corr += 1
            ext = corr + 100000
            k = corr % len(KERNELS)
            op_dur = 8000 + rng.randrange(4000)
            launch_at = t + 2000
            launch_dur = 3000 + rng.randrange(2000)
            stream = 7 + corr % 4
            s = stream % 4
            start = max(launch_at + 4000, stream_free[s]) + 500
            dur = 2000 + rng.randrange(60000)
            stream_free[s] = start + dur
            copy = corr % 8 == 0
            ev = [
                '{"ph": "X", "cat": "cpu_op", "name": "%s", "pid": %d, "tid": %d, "ts": %s, "dur": %s, '
                '"args": {"External id": %d, "Record function id": 0, "Sequence number": %d, "Fwd thread id": 0, '
                '"Ev Idx": %d}}' % (OPS[k], pid, tid, us(t), us(op_dur), ext, corr, written),
                '{"ph": "X", "cat": "cuda_runtime", "name": "%s", "pid": %d, "tid": %d, "ts": %s, "dur": %s, '
                '"args": {"External id": %d, "cbid": %d, "correlation": %d}}'
                % ("cudaMemcpyAsync" if copy else "cudaLaunchKernel", pid, tid, us(launch_at), us(launch_dur), ext,
                   41 if copy else 211, corr),
                '{"ph": "s", "id": %d, "pid": %d, "tid": %d, "ts": %s, "cat": "ac2g", "name": "ac2g"}'
                % (corr, pid, tid, us(launch_at)),
            ]
            if copy:
                ev.append('{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, '
                          '"tid": %d, "ts": %s, "dur": %s, "args": {"External id": %d, "device": 0, "context": 1, '
                          '"stream": %d, "correlation": %d, "bytes": 4194304, "memory bandwidth (GB/s)": 48.2}}'
                          % (stream, us(start), us(dur), ext, stream, corr))
            else:
                ev.append('{"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": %d, "ts": %s, "dur": %s, '
                          '"args": {"External id": %d, "queued": 0, "device": 0, "context": 1, "stream": %d, '
                          '"correlation": %d, "registers per thread": %d, "shared memory": %d, "blocks per SM": 7.75, '
                          '"warps per SM": 62.06, "grid": [%d, 1, 1], "block": [256, 1, 1], '
                          '"est. achieved occupancy %%": 97}}'
                          % (KERNELS[k], stream, us(start), us(dur), ext, stream, corr, 32 + 8 * k, 1024 * k,
                             1024 + k))
            ev.append('{"ph": "f", "id": %d, "pid": 0, "tid": %d, "ts": %s, "cat": "ac2g", "name": "ac2g", "bp": "e"}'
                      % (corr, stream, us(start)))
            for e in ev:
                buf.append(("    " if first else ",\n    ") + e)
                first = False
            written += len(ev)
            t += op_dur + 1000
            if len(buf) > 5000:
                f.write("".join(buf))
                buf.clear()
        f.write("".join(buf))
        f.write('\n  ],\n  "traceName": "bench.pt.trace.json",\n  "displayTimeUnit": "ms",\n'
                '  "baseTimeNanoseconds": 1700000000000000000\n}\n')
    print("wrote %s: %d events" % (args.out, written))


if __name__ == "__main__":
    main()
