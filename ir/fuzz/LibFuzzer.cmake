# kiln_add_libfuzzer: a libFuzzer target whose sources clang++ compiles with
# coverage and ASan instrumentation (custom commands, since the project may
# be built with g++) and links against libraries of the main build (g++ and
# clang++ share libstdc++, so the objects mix). Used by the .kfb reader's
# fuzzer (this directory) and the ONNX importer's (compiler/onnx/fuzz).
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
