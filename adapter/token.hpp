// The listener's token: generated or given, stored 0600, checked before any DAP byte is read.
#pragma once

#include <boost/asio.hpp>

#include <functional>
#include <string>

#include "strata/result.hpp"

namespace strata::adapter {

// A token fits the first line a peer sends (512 bytes with "STRATA-TOKEN ").
inline constexpr std::size_t kMaxTokenLength = 256;
// The token in `path`: its first line, without surrounding blanks; an error when the file
// cannot be read or holds none.
Result<std::string> loadToken(const std::string& path);
// Reads the token from `path`, or creates the file (mode 0600, parents 0700) with a new one.
Result<std::string> loadOrCreateToken(const std::string& path);
// $XDG_CONFIG_HOME/strata/token-PORT (or ~/.config/...).
std::string defaultTokenPath(unsigned port);
// Reads the first line "STRATA-TOKEN <token>" (5 s, 512 bytes at most); a peer that fails is
// closed without a word, and only a peer that passes reaches `accepted`.
void checkToken(boost::asio::io_context& io, boost::asio::ip::tcp::socket socket,
                const std::string& token, std::function<void(boost::asio::ip::tcp::socket)> accepted);

}  // namespace strata::adapter
