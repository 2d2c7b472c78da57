// The one catalog of numbered error ids: what a DAP client gets as ErrorResponse.body.error.id.
#pragma once

namespace strata {

// An error id. A type of its own, so that an Error is built only from one of the named ids
// below, never from a bare number; toInt() gives the number a client sees.
enum class ErrorId : int {};
constexpr int toInt(ErrorId id) { return static_cast<int>(id); }

namespace errors {

// Every Error names one of these ids, so a user or support person can look an error up by its
// number. Each layer has a range of its own (docs/error-ids.md lists the ranges for users); an
// id is defined once, in the range of the layer that owns what went wrong, and other layers
// use the same id when they mean the same thing (the engine's "not found in PATH" is the
// adapter's kProgramNotFound). Numbers never change once given; new ids take the next free one.

// ---- 1000-1099: the session and the protocol: messages, requests, transports, tokens ----------
inline constexpr ErrorId kMalformedMessage{1000};      // not JSON, not a DAP message, or a field of the wrong type
inline constexpr ErrorId kNotInitialized{1001};        // a request before `initialize`
inline constexpr ErrorId kAlreadyInitialized{1002};    // a second `initialize`
inline constexpr ErrorId kUnsupportedRequest{1003};    // a request the adapter or the chosen backend cannot serve
inline constexpr ErrorId kBadArguments{1004};          // a request's arguments are missing, mistyped or out of range
inline constexpr ErrorId kInternal{1005};              // an internal error (a bug): the message says where
inline constexpr ErrorId kCancelled{1006};             // the client cancelled the request
inline constexpr ErrorId kNoDebuggee{1007};            // a debugging request with no program launched or attached
inline constexpr ErrorId kWrongState{1008};            // a request the session's state does not allow (a second launch)
inline constexpr ErrorId kThreadRunning{1009};         // a request that needs a stopped thread, on a running one
inline constexpr ErrorId kSystemCallFailed{1010};      // a system call failed; the message names it and errno's text
inline constexpr ErrorId kBadAddress{1011};            // a HOST:PORT that is not one
inline constexpr ErrorId kHostUnresolved{1012};        // a host name that does not resolve
inline constexpr ErrorId kListenFailed{1013};          // cannot listen on an address
inline constexpr ErrorId kConnectFailed{1014};         // cannot connect to an address
inline constexpr ErrorId kTokenFile{1015};             // a token file that cannot be read, created or holds no token

// ---- 1100-1199: launch and attach: the configuration, and programs run without debugging ---------
inline constexpr ErrorId kLaunchFailed{1100};          // the backend could not start the program (message says why)
inline constexpr ErrorId kProgramNotFound{1101};       // `program` does not exist or is not on PATH
inline constexpr ErrorId kProgramNotExecutable{1102};  // `program` is a directory, unreadable or not executable
inline constexpr ErrorId kBadCwd{1103};                // `cwd` does not exist or cannot be entered
inline constexpr ErrorId kNoPython{1104};              // no Python 3.10 or newer to run a script with
inline constexpr ErrorId kTerminalFailed{1105};        // runInTerminal: the client's terminal did not start the program

// ---- 1200-1299: the Python backend: the link to the agent inside the program ------------------
inline constexpr ErrorId kAgentUnavailable{1200};      // the Python program did not connect, or is no longer connected
inline constexpr ErrorId kAgentLinkClosed{1201};       // the link to the Python program closed while a request waited
inline constexpr ErrorId kAgentRefused{1202};          // the Python agent answered a request with an error (its message)
inline constexpr ErrorId kPeerUnverified{1203};        // the program that dialled in could not be identified as ours
// 1250-1299: reading a Python process's state from its memory (backends/python/remote)
inline constexpr ErrorId kNoPythonRuntime{1250};       // no CPython runtime (_PyRuntime) in the process, or none initialized
inline constexpr ErrorId kPythonLayout{1251};          // a CPython version without a layout, or a layout the process's memory contradicts
inline constexpr ErrorId kPythonMemory{1252};          // the process's memory could not be read where the interpreter's state should be

// ---- 1300-1399: the native backend: requests for native programs --------------------------------
inline constexpr ErrorId kNoProgram{1300};             // a native launch with no program
inline constexpr ErrorId kNotElf{1301};                // the program is not an ELF executable
inline constexpr ErrorId kBadProcessId{1302};          // an attach without a processId, or one that is not a pid
inline constexpr ErrorId kNoSuchProcess{1303};         // no process has that id (it may have exited)
inline constexpr ErrorId kAttachToSelf{1304};          // the process to attach to is strata-dap itself
inline constexpr ErrorId kBadMemoryReference{1305};    // a memory reference or dataId that is not an address Strata gave
inline constexpr ErrorId kRequestTooLarge{1306};       // more memory or instructions than one request may ask for
inline constexpr ErrorId kNoException{1307};           // exceptionInfo for a thread that did not stop on a signal

// ---- 1400-1499: the native debugger: breakpoints, stepping and inspection at a stop -------------
inline constexpr ErrorId kBadHitCondition{1400};       // a hit condition that is not N, >=N, >N, %N or ==N
inline constexpr ErrorId kNothingToConfigure{1401};    // configurationDone with no launch or attach waiting for it
inline constexpr ErrorId kNotStopped{1402};            // a request that needs a stopped program while it runs
inline constexpr ErrorId kUnknownFrame{1403};          // a frame id that is unknown or from an earlier stop
inline constexpr ErrorId kUnknownReference{1404};      // a variables reference that is unknown or from an earlier stop
inline constexpr ErrorId kUnknownStepTarget{1405};     // a stepIn target that is unknown, of another thread or stop
inline constexpr ErrorId kNotInnermostFrame{1406};     // stepInTargets on a frame other than a thread's innermost
inline constexpr ErrorId kNoCaller{1407};              // step out of the outermost frame
inline constexpr ErrorId kStepTargetMissed{1408};      // a stepIn to a chosen call ended before the callee's body

// ---- 1500-1599: native symbols: ELF, DWARF, unwinding, expressions and values -------------------
inline constexpr ErrorId kObjectUnreadable{1500};      // an ELF file that cannot be opened or read
inline constexpr ErrorId kNoDebugInfo{1501};           // the object has no DWARF debug information
inline constexpr ErrorId kNoCodeAtLine{1502};          // no code at or after a line of a file
inline constexpr ErrorId kNoSuchFunction{1503};        // no function of that name
inline constexpr ErrorId kBadDebugInfo{1504};          // DWARF that cannot be read, or that does not describe this place
inline constexpr ErrorId kUnwindFailed{1505};          // a thread's stack cannot be unwound
inline constexpr ErrorId kDisassemblerFailed{1506};    // the disassembler (Capstone) cannot start
inline constexpr ErrorId kBadExpression{1507};         // an expression (or log message) that does not parse
inline constexpr ErrorId kUnknownName{1508};           // no variable or symbol of that name in scope
inline constexpr ErrorId kNoSuchMember{1509};          // no member of that name in the type
inline constexpr ErrorId kBadOperation{1510};          // an operator or index the operands' types do not allow
inline constexpr ErrorId kNullPointer{1511};           // a null pointer dereferenced
inline constexpr ErrorId kDivisionByZero{1512};        // an integer division by zero
inline constexpr ErrorId kIndexOutOfRange{1513};       // an index past a container's end, a key not in a map
inline constexpr ErrorId kOptimizedOut{1514};          // the value is optimized out
inline constexpr ErrorId kNotAssignable{1515};         // a value that cannot be set (computed, in a caller's register, not scalar)
inline constexpr ErrorId kBadValue{1516};              // text that is not a value of the variable's type

// ---- 1600-1699: the native engine: ptrace, processes, threads, memory, breakpoint sites ---------
inline constexpr ErrorId kEngineStopped{1600};         // the native engine has stopped; the request did not run
inline constexpr ErrorId kNoProcess{1601};             // no process is being debugged (it exited, or none was started)
inline constexpr ErrorId kAlreadyDebugging{1602};      // a launch or attach while a process is already debugged
inline constexpr ErrorId kProcessRunning{1603};        // the process runs: pause it first
inline constexpr ErrorId kNoSuchThread{1604};          // no (stopped) thread with that id
inline constexpr ErrorId kPtraceFailed{1605};          // a ptrace or waitpid call failed (the message names it)
inline constexpr ErrorId kAttachRefused{1606};         // the kernel refused the attach (the message says who and why)
inline constexpr ErrorId kStartFailed{1607};           // a launched program ended, or failed, before its first instruction
inline constexpr ErrorId kMemoryUnreadable{1608};      // memory of the program that is not mapped or cannot be read
inline constexpr ErrorId kMemoryUnwritable{1609};      // memory of the program that cannot be written
inline constexpr ErrorId kNoSuchBreakpoint{1610};      // an engine breakpoint id that does not exist
inline constexpr ErrorId kBadWatchpoint{1611};         // a watchpoint that cannot be: size, alignment, not in memory
inline constexpr ErrorId kNoFreeDebugRegister{1612};   // all four hardware debug registers are in use
inline constexpr ErrorId kSignalFailed{1613};          // a signal could not be sent to the program
inline constexpr ErrorId kEngineProcess{1614};         // strata-engine could not be started, or its connection was lost

// ---- 1800-1899: GPU collection: the CUPTI collector in the program, its rings, starting and stopping
inline constexpr ErrorId kGpuSetting{1800};           // a GPU collection setting that does not parse (STRATA_GPU, gpu options)
inline constexpr ErrorId kGpuRing{1801};              // a GPU ring that cannot be created, opened or read, or is corrupt
inline constexpr ErrorId kGpuRingNotReady{1802};      // a GPU ring the collector is still making (try again later)
inline constexpr ErrorId kGpuCollectionState{1803};   // start while collecting, stop while not, or in a forked child
inline constexpr ErrorId kGpuUnavailable{1804};       // CUPTI cannot collect: no GPU or driver, or a CUPTI call failed
// 1850-1899: the session's side of GPU collection (backends/cuda/live) and `strata gpu`
inline constexpr ErrorId kGpuCollectorMissing{1850};  // libstrata_cupti.so was not found (the message says where Strata looked)
inline constexpr ErrorId kGpuRingDirectory{1851};     // the directory for a session's GPU rings cannot be made or used
inline constexpr ErrorId kGpuRunFailed{1852};         // `strata gpu run` could not start the program or write its store

// ---- 1900-1949: the GPU store: trace files, importers and queries -----------------------------
inline constexpr ErrorId kStoreIo{1900};              // a trace or store file that cannot be opened, read or written
inline constexpr ErrorId kNotAStore{1901};            // a file that is no Strata GPU store (or of a newer format)
inline constexpr ErrorId kTraceMalformed{1902};       // a trace file that does not parse: the message names file and position
inline constexpr ErrorId kSqlRejected{1903};          // !sql: a statement that would write, or several statements
inline constexpr ErrorId kSqlFailed{1904};            // !sql: SQLite's own error (syntax, no such table, ...)
inline constexpr ErrorId kNoGpuRecord{1905};          // no GPU record with that id
inline constexpr ErrorId kStoreReadOnly{1906};        // writing to a store opened read-only
inline constexpr ErrorId kQueryInterrupted{1907};     // a query that ran past its time limit
inline constexpr ErrorId kNoOccupancy{1908};          // no occupancy estimate for a launch (the message says what is missing)

// ---- 1950-1999: the GPU backend in a session: the GPU requests, !gpu, launch {"trace"} ----------
inline constexpr ErrorId kNoGpuData{1950};            // a GPU request in a session with no GPU data yet (no trace, no collection)
inline constexpr ErrorId kNoLiveCollection{1951};     // gpuStart/gpuStop/gpuProfile or !gpu start|stop|profile with no program collecting (or no live collection)

// ---- 2000-2049: core files: reading them, and sessions over them ------------------------------
inline constexpr ErrorId kCoreUnreadable{2000};       // a core file that cannot be opened or mapped
inline constexpr ErrorId kNotACore{2001};             // a file that is no x86-64 ELF core (the message says what it is)
inline constexpr ErrorId kCoreMemoryMissing{2002};    // an address the core holds no bytes for (not dumped, truncated, a file gone)
inline constexpr ErrorId kCoreCannotRun{2003};        // continue, step or write in a session over a core file

// ---- 1700-1799: the strata CLI and the benchmarks (printed by those tools, not sent over DAP) ----
inline constexpr ErrorId kBadCommandLine{1700};        // a command-line option that does not parse
inline constexpr ErrorId kTimedOut{1701};              // the peer did not answer in time
inline constexpr ErrorId kPeerGone{1702};              // the peer exited or closed the connection
inline constexpr ErrorId kUnexpectedReply{1703};       // the peer answered with something unexpected

}  // namespace errors
}  // namespace strata
