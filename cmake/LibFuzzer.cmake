# libFuzzer targets built beside a project that may be compiled by g++.
#
# kiln_find_libfuzzer(<reason variable>): finds clang++ (KILN_FUZZ_CLANGXX)
# and checks once per build directory that it links libFuzzer programs (it
# needs the compiler-rt package, e.g. libclang-rt-14-dev, besides clang
# itself). Sets the variable to why no fuzzer can be built, or to "".
#
# kiln_add_libfuzzer: a libFuzzer target whose sources clang++ compiles with
# coverage and ASan instrumentation (custom commands, since the project may
# be built with g++) and links against libraries of the main build (g++ and
# clang++ share libstdc++, so the objects mix). Used by the runtime's .kmod
# and .npy fuzzers (runtime/fuzz), the .kfb reader's (ir/fuzz), the ONNX
# importer's (compiler/onnx/fuzz) and the MLIR compile path's
# (compiler/fuzz).
#
#   kiln_add_libfuzzer(TARGET name WHAT "the .kfb fuzzer"
#     FLAGS <clang++ flags for every source>
#     SOURCES <sources>
#     SOURCE_FLAGS <flags after FLAGS for the sources not in EH_SOURCES>
#     EH_SOURCES <names (no extension) compiled with -fexceptions -frtti>
#     DEPENDS <targets the compilation waits for (generated headers)>
#     LIBRARIES <libraries to link>)
#
# It sets the link rule of the calling directory (so of every executable
# there) to clang++ with -fsanitize=fuzzer,address.
#
# kiln_add_skipped_fuzz_test(NAME REASON LABELS...): the ctest entry of a
# fuzzer that cannot be built, which reports itself as skipped and why.

include_guard(GLOBAL)

function(kiln_find_libfuzzer reason_variable)
  find_program(KILN_FUZZ_CLANGXX
    NAMES clang++ clang++-19 clang++-18 clang++-17 clang++-16 clang++-15
          clang++-14
    DOC "clang++ used to build the libFuzzer targets")
  set(reason "")
  if(NOT KILN_FUZZ_CLANGXX)
    set(reason "clang++ was not found")
  elseif(KILN_SANITIZE AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    set(reason
        "KILN_SANITIZE is set for a ${CMAKE_CXX_COMPILER_ID} build, whose "
        "sanitizer runtime cannot be linked by clang++")
  else()
    if(NOT DEFINED KILN_FUZZ_CLANGXX_WORKS)
      set(probe_dir ${CMAKE_BINARY_DIR}/libfuzzer-probe)
      file(MAKE_DIRECTORY ${probe_dir})
      file(WRITE ${probe_dir}/probe.cpp
           "#include <cstddef>\n#include <cstdint>\n"
           "extern \"C\" int LLVMFuzzerTestOneInput(const uint8_t *, "
           "size_t) { return 0; }\n")
      execute_process(
        COMMAND ${KILN_FUZZ_CLANGXX} -fsanitize=fuzzer,address
                ${probe_dir}/probe.cpp -o ${probe_dir}/probe
        RESULT_VARIABLE probe_result
        OUTPUT_QUIET ERROR_QUIET)
      if(probe_result EQUAL 0)
        set(KILN_FUZZ_CLANGXX_WORKS ON CACHE INTERNAL "")
      else()
        set(KILN_FUZZ_CLANGXX_WORKS OFF CACHE INTERNAL "")
      endif()
    endif()
    if(NOT KILN_FUZZ_CLANGXX_WORKS)
      set(reason
          "${KILN_FUZZ_CLANGXX} cannot link libFuzzer programs (is "
          "compiler-rt, e.g. libclang-rt-14-dev, installed?)")
    endif()
  endif()
  string(JOIN "" reason ${reason})
  set(${reason_variable} "${reason}" PARENT_SCOPE)
endfunction()

function(kiln_add_skipped_fuzz_test name reason)
  add_test(NAME ${name}
    COMMAND sh -c "echo '${name}: skipped: ${reason}'; exit 77")
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77
    LABELS "${ARGN}")
endfunction()

function(kiln_add_libfuzzer)
  cmake_parse_arguments(FUZZ "" "TARGET;WHAT"
    "FLAGS;SOURCES;SOURCE_FLAGS;EH_SOURCES;DEPENDS;LIBRARIES" ${ARGN})
  # clang's depfiles name their objects by absolute path, which Ninja
  # matches only when CMake rewrites the depfile (the top level keeps the
  # old behaviour for mlir-tblgen's relative depfiles).
  cmake_policy(SET CMP0116 NEW)
  set(objects)
  foreach(source ${FUZZ_SOURCES})
    get_filename_component(name ${source} NAME_WE)
    set(object ${CMAKE_CURRENT_BINARY_DIR}/objects/${name}.o)
    set(source_flags ${FUZZ_SOURCE_FLAGS})
    if(name IN_LIST FUZZ_EH_SOURCES)
      set(source_flags -fexceptions -frtti)
    endif()
    add_custom_command(
      OUTPUT ${object}
      COMMAND ${KILN_FUZZ_CLANGXX} ${FUZZ_FLAGS} ${source_flags}
              -MD -MF ${object}.d -c ${source} -o ${object}
      DEPENDS ${source} ${FUZZ_DEPENDS}
      DEPFILE ${object}.d
      COMMENT "Compiling ${name}.cpp for ${FUZZ_WHAT} (clang++)"
      VERBATIM)
    list(APPEND objects ${object})
  endforeach()

  # The objects come in as sources; the link rule drives clang++, which adds
  # libFuzzer and the ASan runtime. The libraries, with their MLIR
  # dependencies, come from CMake.
  set(link "${KILN_FUZZ_CLANGXX} -fsanitize=fuzzer,address <LINK_FLAGS>")
  string(APPEND link " <OBJECTS> -o <TARGET> <LINK_LIBRARIES>")
  set(CMAKE_CXX_LINK_EXECUTABLE "${link}" PARENT_SCOPE)
  set_source_files_properties(${objects} PROPERTIES
    EXTERNAL_OBJECT ON GENERATED ON)
  add_executable(${FUZZ_TARGET} ${objects})
  set_target_properties(${FUZZ_TARGET} PROPERTIES LINKER_LANGUAGE CXX)
  target_link_libraries(${FUZZ_TARGET} PRIVATE ${FUZZ_LIBRARIES})
endfunction()
