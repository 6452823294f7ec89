# Sanitizers: -DKILN_SANITIZE=address;undefined instruments kiln's own code
# (not the prebuilt LLVM/MLIR libraries, nor the code kiln generates).
# tools/test.sh --sanitize configures, builds and tests such a tree.
set(KILN_SANITIZE "" CACHE STRING "Semicolon-separated list of sanitizers")
if(KILN_SANITIZE)
  # "address,undefined": -fsanitize's form of the list.
  string(REPLACE ";" "," KILN_SANITIZE_LIST "${KILN_SANITIZE}")
  add_compile_options(-fsanitize=${KILN_SANITIZE_LIST} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${KILN_SANITIZE_LIST})
endif()

# kiln_sanitizer_defaults(): in an AddressSanitizer build, links
# cmake/SanitizerDefaults.c (the runtime options every kiln program needs,
# and why) into every executable the project defines. Called once, after
# all subdirectories are added, so that it sees every executable.
function(kiln_sanitizer_defaults)
  if(NOT "address" IN_LIST KILN_SANITIZE)
    return()
  endif()
  add_library(KilnSanitizerDefaults OBJECT
    ${PROJECT_SOURCE_DIR}/cmake/SanitizerDefaults.c)
  # It runs while the runtime initializes: nothing in it is instrumented.
  target_compile_options(KilnSanitizerDefaults PRIVATE -fno-sanitize=all)
  set(directories ${PROJECT_SOURCE_DIR})
  while(directories)
    list(POP_FRONT directories directory)
    get_property(targets DIRECTORY ${directory} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target ${targets})
      get_target_property(type ${target} TYPE)
      if(type STREQUAL "EXECUTABLE")
        target_sources(${target} PRIVATE
          $<TARGET_OBJECTS:KilnSanitizerDefaults>)
      endif()
    endforeach()
    get_property(subdirectories DIRECTORY ${directory} PROPERTY SUBDIRECTORIES)
    list(APPEND directories ${subdirectories})
  endwhile()
endfunction()
