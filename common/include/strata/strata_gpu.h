/* The entry points libstrata_cupti.so exports, for the CUDA driver (launch mode), the Python
   agent (ctypes or dlsym) and the native engine (a breakpoint on strata_gpu_error_stop). C, so
   any of them can use it. */
#ifndef STRATA_GPU_H
#define STRATA_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Launch mode: the CUDA driver calls this inside cuInit when CUDA_INJECTION64_PATH names the
   library. Reads STRATA_GPU_* from the environment. Returns 1 (the driver ignores failure; a
   failure is in the ring's status). */
int InitializeInjection(void);

/* Late mode: starts collecting in a process whose CUDA contexts may already exist. `config`
   is "key=value" words ("mode=stacks dir=/run/strata/s1 session=s1"), NULL for the
   environment's STRATA_GPU_*. Returns 0 when collecting, otherwise a negative number, with
   the reason in strata_gpu_status() and the ring's status. */
int strata_gpu_start(const char* config);

/* Stops collecting: activities disabled, everything flushed to the ring, callbacks
   unsubscribed; CUPTI itself is finalized at the next CUDA API call's exit (the only safe
   place), after which nothing of Strata runs in the process. 0 on success. */
int strata_gpu_stop(void);

/* Flushes CUPTI's buffers (incomplete ones too) into the ring now. 0 on success. */
int strata_gpu_flush(void);

/* The collector's state in one line ("collecting (stacks) into /run/strata/s1/...", "CUPTI is
   held by ..."); returns the length it wanted (snprintf-style). */
int strata_gpu_status(char* buffer, size_t size);

/* Framework-side correlation: ids pushed here appear as externalId on the records of the CUDA
   calls this thread makes until the matching pop (CUPTI external correlation, kind CUSTOM2).
   0 on success, -1 when not collecting (CUPTI is then left alone). */
int strata_gpu_push_external_id(uint64_t id);
int strata_gpu_pop_external_id(void);

/* A Python thread about to wait in a C call for kernels other threads launch (the thread that
   calls backward() while autograd's engine threads launch its kernels): its frames (the `skip`
   innermost left out) are read now, and launches from threads with no Python frame are tied to
   them until strata_gpu_scope_leave(slot). `kind` 1: backward. Returns the slot, -1 when not
   collecting stacks or the thread runs no Python. Collector-installed wrappers call these; the
   calls cost a few microseconds, once per backward(). */
int strata_gpu_scope_enter(int kind, int skip);
void strata_gpu_scope_leave(int slot);

/* Called by the wrapper the collector asks the main thread to install (a pending call) around
   torch's autograd engine: 1 when it is in place, 0 when torch is not imported yet. */
void strata_gpu_python_hooked(int installed);

/* A sticky CUDA error seen at a CUDA API call's exit, in the thread that made the call. */
typedef struct StrataGpuError {
  uint32_t size;             /* sizeof(StrataGpuError) of the collector that made it */
  int32_t result;            /* 700 illegal address, 710 assert, 719 launch failure, ... */
  uint32_t domain;           /* 1 driver API, 2 runtime API */
  uint32_t cbid;             /* CUPTI callback id of the API */
  uint32_t tid;              /* OS thread id */
  uint32_t lastCorrelation;  /* the last launch this thread made (0: none) */
  uint32_t lastSite;         /* its launch site id in the ring (0: unknown) */
  uint32_t reserved;
  uint64_t callerPc;         /* first return address outside CUDA and Strata: the program's call */
  const char* api;           /* "cudaDeviceSynchronize" */
  const char* error;         /* "cudaErrorIllegalAddress" */
  const char* lastKernel;    /* mangled name, "" when none */
  const char* message;       /* the whole sentence for exceptionInfo */
} StrataGpuError;

typedef void (*StrataGpuErrorHook)(const StrataGpuError* error, void* user);

/* Registers the function called (in the failing thread, before the CUDA call returns to the
   program, GIL state as the program left it) for the first sticky error of the process; NULL
   removes it. The Python agent turns it into an exception stop at the calling line. */
int strata_gpu_set_error_hook(StrataGpuErrorHook hook, void* user);

/* Called for that same error after the hook, and does nothing: the native engine puts a
   breakpoint here, reads *error (first argument register), and reports the stop at the frame
   whose return address is error->callerPc. */
void strata_gpu_error_stop(const StrataGpuError* error);

#ifdef __cplusplus
}
#endif

#endif
