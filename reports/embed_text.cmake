# Turns a text file into a C++ source file defining `std::string FUNCTION()` that returns the
# file's content, so the HTML report can inline it with nothing to find at run time. Run at build
# time by reports/CMakeLists.txt:
#
#   cmake -DINPUT=file.js -DOUTPUT=file.cc -DFUNCTION=EmbeddedChartJs -P embed_text.cmake
#
# The content goes into raw string literals of at most 60000 characters each: ISO C++ only
# promises string literals of 65536 characters, and GCC's -Wpedantic warns beyond that. The file
# is refused when it could end the literal early or, once inlined into a <script> or <style>
# element of the report, end that element.
foreach(variable INPUT OUTPUT FUNCTION)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "embed_text.cmake: -D${variable}=... is required")
  endif()
endforeach()
if(NOT EXISTS "${INPUT}")
  message(FATAL_ERROR "embed_text.cmake: ${INPUT} does not exist")
endif()

file(READ "${INPUT}" content)
set(delimiter "mmtune_embed")
string(FIND "${content}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "embed_text.cmake: ${INPUT} contains ')${delimiter}\"', which would end "
                      "the raw string literal")
endif()
string(TOLOWER "${content}" lowered)
foreach(closing "</script" "</style" "<!--")
  string(FIND "${lowered}" "${closing}" found)
  if(NOT found EQUAL -1)
    message(FATAL_ERROR "embed_text.cmake: ${INPUT} contains '${closing}', which would break "
                        "the HTML element it is inlined into")
  endif()
endforeach()

get_filename_component(input_name "${INPUT}" NAME)
set(code "// Generated at build time by reports/embed_text.cmake from ${input_name}; do not edit.\n")
string(APPEND code "#include \"reports/embedded_assets.h\"\n\n#include <string_view>\n\n")
string(APPEND code "namespace mmtune {\nnamespace {\n\nconstexpr std::string_view kChunks[] = {\n")
string(LENGTH "${content}" length)
set(chunk_size 60000)
set(offset 0)
while(offset LESS length)
  string(SUBSTRING "${content}" ${offset} ${chunk_size} chunk)
  string(APPEND code "    R\"${delimiter}(${chunk})${delimiter}\",\n")
  math(EXPR offset "${offset} + ${chunk_size}")
endwhile()
if(length EQUAL 0)
  string(APPEND code "    \"\",\n")
endif()
string(APPEND code "};\n\n}  // namespace\n\nstd::string ${FUNCTION}() {\n")
string(APPEND code "  std::string text;\n  text.reserve(${length});\n")
string(APPEND code "  for (std::string_view chunk : kChunks) text.append(chunk);\n")
string(APPEND code "  return text;\n}\n\n}  // namespace mmtune\n")

# Written only when it changed, so an unchanged input does not recompile the library.
file(WRITE "${OUTPUT}.tmp" "${code}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
