// Putting untrusted text into an HTML page. Everything a report shows comes from a DB or a bench
// file that anyone may have written (a session's command line, a CPU brand string, a benchmark
// label), so every such string goes through one of these two functions and nothing else.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace mmtune {

// For element content and quoted attribute values: `&`, `<`, `>`, `"` and `'` become character
// references; invalid UTF-8 and control characters other than tab, newline and carriage return
// become U+FFFD, so the output is always valid UTF-8 text.
std::string HtmlEscape(std::string_view text);

// JSON to embed inside a <script> element: `<`, `>` and `&` are written as \u003c, \u003e and
// \u0026 and U+2028/U+2029 as \u2028/\u2029 (they only occur inside JSON strings, where these
// escapes mean the same), so no string can close the element or open a comment in it. Invalid
// UTF-8 is replaced, never thrown.
std::string JsonForScript(const nlohmann::json& json);

}  // namespace mmtune
