// The child sessions of `strata run --break` (child_runs.hpp).
#include "adapter/cli/child_runs.hpp"

#include <algorithm>

#include "adapter/cli/json_fields.hpp"

namespace strata::cli {

using namespace fields;

std::size_t ChildRuns::running() const {
  return static_cast<std::size_t>(std::count_if(children_.begin(), children_.end(), [](const Child& c) { return !c.over; }));
}

void ChildRuns::serve(DapClient& client) {
  client.onReverseRequest([this](const protocol::Request& q, DapClient::Respond respond) {
    const auto& args = obj(q.arguments);
    auto* configuration = args.if_contains("configuration");
    if (str(args, "request") != "attach" || !configuration || !configuration->is_object())
      return respond(std::string("the strata CLI opens child sessions that attach, with a configuration"));
    start(configuration->get_object(), std::move(respond));
  });
}

void ChildRuns::start(const json::object& configuration, DapClient::Respond respond) {
  Child& child = children_.emplace_back();
  child.name = str(configuration, "name");
  if (child.name.empty()) child.name = "a child process";
  child.client = std::make_unique<DapClient>(io_);
  if (auto spawned = child.client->spawn(options_.adapter); !spawned) {
    child.over = true;
    return respond(spawned.error().message);
  }
  respond(std::nullopt);
  Child* c = &child;
  serve(*c->client);  // its own children come as sessions too
  c->client->onEvent([this, c](const protocol::Event& e) { onEvent(*c, e); });
  c->client->onClosed([c] { c->over = true; });
  json::object init{{"clientID", "strata-cli"}, {"clientName", "strata"}, {"adapterID", "strata"},
                    {"linesStartAt1", true}, {"columnsStartAt1", true}, {"pathFormat", "path"},
                    {"supportsRunInTerminalRequest", false}, {"supportsStartDebuggingRequest", true}};
  c->client->request("initialize", init, [this, c, configuration](const protocol::Response& r) {
    if (!r.success) {
      options_.output("console", c->name + ": no session: " + r.message.value_or("initialize failed") + "\n");
      return c->client->close();
    }
    c->client->request("attach", configuration, [this, c](const protocol::Response& r) {
      if (r.success) return;
      options_.output("console", c->name + ": no session: " + r.message.value_or("attach failed") + "\n");
      c->client->close();
    });
  });
}

void ChildRuns::onEvent(Child& child, const protocol::Event& e) {
  const auto& body = obj(e.body);
  Child* c = &child;
  if (e.event == "initialized") {
    // The breakpoints of the command line, then the process runs on.
    setBreakpoints(
        *c->client, options_.breaks, [](const std::string&) {},  // the program's session said them already
        [c] { c->client->request("configurationDone", nullptr, [](const protocol::Response&) {}); });
  } else if (e.event == "output") {
    // The child's own output and what must be seen; the console lines of its session's start
    // and end are the child adapter's business.
    std::string category = str(body, "category");
    if (category == "stdout" || category == "stderr" || category == "important") options_.output(category, str(body, "output"));
  } else if (e.event == "stopped") {
    reportStopAndContinue(*c->client, body, options_.json, c->name);
  } else if (e.event == "terminated") {
    c->client->request("disconnect", json::object{{"terminateDebuggee", false}},
                       [c](const protocol::Response&) { c->client->close(); });
  }
}

}  // namespace strata::cli
