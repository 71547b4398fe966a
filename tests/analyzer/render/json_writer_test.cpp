// The one JSON writer (analyzer/render/json_writer.h): nesting, separators, and the escaping that keeps
// any bytes parseable.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analyzer/render/json_writer.h"

namespace gpumemtrace::render {
namespace {

std::string text_of(const fmt::memory_buffer& out) { return std::string(out.data(), out.size()); }

TEST(JsonWriter, NestsObjectsAndArraysWithKeysOnlyInObjects) {
  fmt::memory_buffer out;
  JsonWriter json(out);
  json.begin_object();
  json.number("a", uint64_t{1});
  json.begin_array("list");
  json.number({}, int64_t{-2});
  json.begin_object();
  json.null("n");
  json.boolean("b", true);
  json.end_object();
  json.begin_array();
  json.end_array();
  json.string("ignored in an array", "s");
  json.end_array();
  json.begin_object("empty");
  json.end_object();
  json.optional_string("none", "");
  json.optional_number("some", 7);
  json.end_object();
  EXPECT_EQ(text_of(out), R"({"a":1,"list":[-2,{"n":null,"b":true},[],"s"],"empty":{},"none":null,"some":7})");
}

TEST(JsonObject, IsOneFlatObjectForItsLifetime) {
  fmt::memory_buffer out;
  {
    JsonObject json(out);
    json.number("x", uint64_t{3});
    std::string_view values[] = {"p", "q"};
    json.strings("argv", values);
  }
  out.push_back('\n');
  { JsonObject json(out); }
  EXPECT_EQ(text_of(out), "{\"x\":3,\"argv\":[\"p\",\"q\"]}\n{}");
}

TEST(JsonString, EscapesQuotesControlsAndBytesThatAreNotUtf8) {
  fmt::memory_buffer out;
  append_json_string(out, "plain \"q\" \\ \n\t\r\x01 é \xff end");
  EXPECT_EQ(text_of(out), "\"plain \\\"q\\\" \\\\ \\n\\t\\r\\u0001 é \\ufffd end\"");
  EXPECT_EQ(nlohmann::json::parse(text_of(out)), "plain \"q\" \\ \n\t\r\x01 é \xef\xbf\xbd end");
}

}  // namespace
}  // namespace gpumemtrace::render
