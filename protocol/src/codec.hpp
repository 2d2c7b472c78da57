// The field visitors behind every protocol struct's encoder and decoder, shared by the type files.
#pragma once

#include "strata/protocol/json.hpp"

namespace strata::protocol::codec {

// Encodes every present field; absent optionals and null JSON values are left out.
struct Encoder {
  json::object& o;
  template <class T>
  void field(const char* key, const T& value, bool /*required*/) {
    if constexpr (std::is_same_v<T, json::value>) {
      if (!value.is_null()) o[key] = value;
    } else {
      put(o, key, value);
    }
  }
};

struct Decoder {
  Reader& r;
  template <class T>
  void field(const char* key, T& value, bool required) {
    if (required) r.required(key, value);
    else r.optionalOr(key, value);
  }
  template <class T>
  void field(const char* key, std::optional<T>& value, bool /*required*/) {
    r.optional(key, value);
  }
};

}  // namespace strata::protocol::codec

// One field list drives both directions: fieldsOfT(visitor, value) plus the two tag_invoke.
#define STRATA_CODEC(T, ...)                                                          \
  template <class V, class X>                                                         \
  static void fieldsOf##T(V& v, X& t) {                                               \
    __VA_ARGS__                                                                       \
  }                                                                                   \
  void tag_invoke(const json::value_from_tag&, json::value& jv, const T& value) {     \
    json::object o;                                                                   \
    codec::Encoder e{o};                                                              \
    fieldsOf##T(e, value);                                                            \
    jv = std::move(o);                                                                \
  }                                                                                   \
  void tag_invoke(decode_tag, Reader& r, T& value) {                                  \
    codec::Decoder d{r};                                                              \
    fieldsOf##T(d, value);                                                            \
  }
