// The native requests' argument structs: round trips, and errors that name the field.
#include "round_trip.hpp"

using namespace strata::protocol;
using strata::protocol::testing::roundTrip;

TEST_CASE("round trip of the native requests' arguments") {
  roundTrip<DataBreakpointInfoArguments>(R"({"variablesReference":3,"name":"x","frameId":2,"bytes":4,"asAddress":false,"mode":"m"})");
  roundTrip<SetDataBreakpointsArguments>(R"({"breakpoints":[{"dataId":"0x10/4/x","accessType":"write","condition":"c","hitCondition":"2"}]})");
  roundTrip<SetInstructionBreakpointsArguments>(R"({"breakpoints":[{"instructionReference":"0x401000","offset":-4,"condition":"c","hitCondition":"3"}]})");
  roundTrip<ReadMemoryArguments>(R"({"memoryReference":"0x1000","offset":8,"count":16})");
  roundTrip<WriteMemoryArguments>(R"({"memoryReference":"0x1000","offset":0,"allowPartial":true,"data":"AAE="})");
  roundTrip<DisassembleArguments>(R"({"memoryReference":"0x1000","offset":0,"instructionOffset":-3,"instructionCount":8,"resolveSymbols":true})");
  roundTrip<ModulesArguments>(R"({"startModule":1,"moduleCount":2})");
  roundTrip<StepInTargetsArguments>(R"({"frameId":7})");
  roundTrip<AttachRequestArguments>(R"({"processId":"4242","stopOnEntry":true})");
  roundTrip<AttachRequestArguments>(R"({"processId":4242})");
  roundTrip<StackFrame>(R"({"id":1,"name":"f","line":3,"column":1,"instructionPointerReference":"0x401000","moduleId":"/bin/x"})");
  roundTrip<Variable>(R"({"name":"p","value":"0x10","variablesReference":0,"memoryReference":"0x10"})");
}

TEST_CASE("missing required fields of the native requests are named") {
  auto r = decode<ReadMemoryArguments>(json::parse(R"({"memoryReference":"0x10"})"), "arguments");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "arguments.count: required field is missing");
  auto d = decode<SetDataBreakpointsArguments>(json::parse(R"({"breakpoints":[{"accessType":"write"}]})"), "arguments");
  REQUIRE_FALSE(d.ok());
  CHECK(d.error().message == "arguments.breakpoints[0].dataId: required field is missing");
}
