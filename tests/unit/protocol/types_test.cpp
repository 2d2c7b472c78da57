// Every protocol struct survives a JSON round trip; decoding errors name the field's path.
#include "round_trip.hpp"

using namespace strata::protocol;
using strata::protocol::testing::roundTrip;

TEST_CASE("round trip of every struct") {
  roundTrip<InitializeRequestArguments>(R"({"clientID":"vscode","adapterID":"strata","linesStartAt1":true,"supportsRunInTerminalRequest":true,"pathFormat":"path"})");
  roundTrip<ExceptionBreakpointsFilter>(R"({"filter":"raised","label":"Raised","default":false,"supportsCondition":true})");
  roundTrip<Capabilities>(R"({"supportsConfigurationDoneRequest":true,"supportTerminateDebuggee":true,"exceptionBreakpointFilters":[{"filter":"f","label":"F"}],"completionTriggerCharacters":["!","."],"supportsGpuTimeline":true})");
  roundTrip<LaunchRequestArguments>(R"({"noDebug":true,"program":"/p","args":["a","b"],"cwd":"/","env":{"A":"1","B":null},"stopOnEntry":false,"console":"integratedTerminal","python":["/py","-X","dev"]})");
  roundTrip<DisconnectArguments>(R"({"restart":false,"terminateDebuggee":true,"suspendDebuggee":false})");
  roundTrip<TerminateArguments>(R"({"restart":true})");
  roundTrip<CancelArguments>(R"({"requestId":4,"progressId":"p"})");
  roundTrip<RunInTerminalRequestArguments>(R"({"kind":"integrated","title":"t","cwd":"/","args":["x"],"env":{"A":"b","C":null},"argsCanBeInterpretedByShell":false})");
  roundTrip<RunInTerminalResponseBody>(R"({"processId":10,"shellProcessId":11})");
  roundTrip<Source>(R"({"name":"a.c","path":"/a.c","sourceReference":0,"presentationHint":"normal","origin":"o","adapterData":{"x":[1]}})");
  roundTrip<SourceBreakpoint>(R"({"line":3,"column":2,"condition":"x>1","hitCondition":">=5","logMessage":"x={x}","mode":"m"})");
  roundTrip<SetBreakpointsArguments>(R"({"source":{"path":"/a.c"},"breakpoints":[{"line":1}],"lines":[1],"sourceModified":false})");
  roundTrip<FunctionBreakpoint>(R"({"name":"main","condition":"argc>1","hitCondition":"2"})");
  roundTrip<SetFunctionBreakpointsArguments>(R"({"breakpoints":[{"name":"f"}]})");
  roundTrip<ExceptionFilterOptions>(R"({"filterId":"raised","condition":"ValueError","mode":"m"})");
  roundTrip<SetExceptionBreakpointsArguments>(R"({"filters":["uncaught"],"filterOptions":[{"filterId":"raised"}],"exceptionOptions":[{"breakMode":"always"}]})");
  roundTrip<Breakpoint>(R"({"id":1,"verified":true,"message":"m","source":{"path":"/a"},"line":4,"column":1,"endLine":4,"endColumn":9,"instructionReference":"0x10","reason":"pending"})");
  roundTrip<BreakpointsBody>(R"({"breakpoints":[{"verified":false}]})");
  roundTrip<Thread>(R"({"id":77,"name":"main"})");
  roundTrip<ThreadsBody>(R"({"threads":[{"id":1,"name":"a"}]})");
  roundTrip<OutputEventBody>(R"({"category":"stdout","output":"x\n","group":"start","variablesReference":0,"source":{"path":"/a"},"line":1,"column":1,"data":{"k":1}})");
  roundTrip<ExitedEventBody>(R"({"exitCode":3})");
  roundTrip<TerminatedEventBody>(R"({"restart":{"a":1}})");
  roundTrip<ProcessEventBody>(R"({"name":"p","systemProcessId":5,"isLocalProcess":true,"startMethod":"launch","pointerSize":64})");
  roundTrip<CapabilitiesEventBody>(R"({"capabilities":{"supportsStepBack":false}})");
}

TEST_CASE("absent optionals are left out, never written as null") {
  ProcessEventBody p;
  p.name = "x";
  CHECK(json::serialize(json::value_from(p)) == R"({"name":"x"})");
}

TEST_CASE("decoding errors name the path of the field") {
  auto e1 = decode<SetBreakpointsArguments>(json::parse(R"({"source":{"path":3}})"), "arguments");
  REQUIRE_FALSE(e1.ok());
  CHECK(e1.error().message == "arguments.source.path: expected a string, got an integer");
  auto e2 = decode<SetBreakpointsArguments>(json::parse(R"({"source":{},"breakpoints":[{"line":1},{"column":1}]})"), "arguments");
  CHECK(e2.error().message == "arguments.breakpoints[1].line: required field is missing");
  auto e3 = decode<LaunchRequestArguments>(json::parse(R"({"args":["a",{}]})"), "arguments");
  CHECK(e3.error().message == "arguments.args[1]: expected a string, got an object");
  auto e4 = decode<Thread>(json::parse(R"({"id":1.5,"name":"x"})"), "body");
  CHECK(e4.error().message == "body.id: expected an integer, got a number");
  auto e5 = decode<Thread>(json::parse(R"({"id":99999999999999999999,"name":"x"})"), "body");
  CHECK_FALSE(e5.ok());
  auto e6 = decode<Thread>(json::parse("[]"), "body");
  CHECK(e6.error().message == "body: expected an object, got an array");
}

TEST_CASE("round trip of the debugging structs") {
  roundTrip<AttachRequestArguments>(R"({"connect":{"host":"127.0.0.1","port":5678},"justMyCode":false,"stopOnEntry":true})");
  roundTrip<StepArguments>(R"({"threadId":7,"singleThread":true,"granularity":"line"})");
  roundTrip<StackTraceArguments>(R"({"threadId":7,"startFrame":1,"levels":20})");
  roundTrip<StackTraceBody>(R"({"stackFrames":[{"id":1,"name":"f","source":{"path":"/a.py"},"line":3,"column":1,"presentationHint":"subtle"}],"totalFrames":9})");
  roundTrip<ScopesBody>(R"({"scopes":[{"name":"Locals","presentationHint":"locals","variablesReference":4,"expensive":false}]})");
  roundTrip<VariablesArguments>(R"({"variablesReference":4,"filter":"indexed","start":10,"count":5})");
  roundTrip<VariablesBody>(R"({"variables":[{"name":"x","value":"[1]","type":"list","presentationHint":{"kind":"data","attributes":["readOnly"]},"evaluateName":"x","variablesReference":5,"indexedVariables":1}]})");
  roundTrip<EvaluateArguments>(R"({"expression":"x+1","frameId":2,"context":"hover"})");
  roundTrip<EvaluateResponseBody>(R"({"result":"2","type":"int","variablesReference":0})");
  roundTrip<SetVariableArguments>(R"({"variablesReference":4,"name":"x","value":"3"})");
  roundTrip<SetValueResponseBody>(R"({"value":"3","type":"int","variablesReference":0})");
  roundTrip<CompletionsBody>(R"({"targets":[{"label":"label","type":"variable","start":0,"length":3}]})");
  roundTrip<ExceptionInfoResponseBody>(R"({"exceptionId":"ValueError","description":"bad","breakMode":"unhandled","details":{"message":"bad","typeName":"ValueError","stackTrace":"Traceback"}})");
  roundTrip<StoppedEventBody>(R"({"reason":"breakpoint","threadId":7,"allThreadsStopped":true,"hitBreakpointIds":[1,2]})");
  roundTrip<BreakpointEventBody>(R"({"reason":"changed","breakpoint":{"id":3,"verified":true,"line":8}})");
}

TEST_CASE("debugging structs name a missing field") {
  auto r = decode<StepArguments>(json::parse(R"({"granularity":"line"})"), "arguments");
  REQUIRE(!r.ok());
  CHECK(r.error().message == "arguments.threadId: required field is missing");
}
