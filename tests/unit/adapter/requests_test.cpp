// protocol's request list against the handlers the session registers: the same commands, each
// with the arguments type its handler decodes, so the fuzzers reach every decoder in use.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <typeinfo>

#include "adapter/handler.hpp"
#include "strata/protocol/requests.hpp"

using namespace strata;

TEST_CASE("every registered handler is in the request list, with its arguments type") {
  std::map<std::string, const std::type_info*> listed;
  protocol::forEachRequest([&]<class Args>(protocol::RequestKind<Args> r) {
    CHECK_MESSAGE(listed.emplace(std::string(r.command), &typeid(Args)).second,
                  "listed twice: " << r.command);
  });
  std::map<std::string, const std::type_info*> handled;
  for (const auto& h : adapter::makeHandlers())
    CHECK_MESSAGE(handled.emplace(std::string(h->command()), &h->argumentsType()).second,
                  "two handlers for " << h->command());
  for (const auto& [command, type] : handled) {
    auto it = listed.find(command);
    CHECK_MESSAGE(it != listed.end(), command << " has a handler but is missing from requests.hpp");
    if (it != listed.end())
      CHECK_MESSAGE(*it->second == *type, command << ": requests.hpp lists " << it->second->name()
                                                  << ", the handler decodes " << type->name());
  }
  for (const auto& [command, type] : listed)
    CHECK_MESSAGE(handled.count(command) == 1, command << " is listed but has no handler");
  CHECK(handled.size() == listed.size());
}
