# Runs one of the runtime's fuzzers for a bounded number of inputs: the
# ctest entries kmod-fuzz and npy-fuzz (see CMakeLists.txt).
#
#   cmake -DNAME=... -DFUZZER=... -DWORK_DIR=... -DRUNS=... -DMAX_SECONDS=...
#         [-DSEEDS=files and directories] [-DCOMPILE=kiln-compile
#          -DPROGRAMS=programs to compile into seeds] [-DDICTIONARY=...]
#         -P RunFuzzer.cmake

include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/RunLibFuzzer.cmake)
kiln_fuzz_begin(NAME)

foreach(seed ${SEEDS})
  if(IS_DIRECTORY ${seed})
    file(GLOB files ${seed}/*)
  else()
    set(files ${seed})
  endif()
  file(COPY ${files} DESTINATION ${WORK_DIR}/seeds)
endforeach()

# Modules of each program for both targets: the CUDA module carries PTX and
# host code, the CPU module a shared object.
if(COMPILE)
  foreach(program ${PROGRAMS})
    get_filename_component(name ${program} NAME_WE)
    foreach(target cpu cuda)
      execute_process(
        COMMAND ${COMPILE} --target=${target} ${program}
                -o ${WORK_DIR}/seeds/${name}.${target}.kmod
        RESULT_VARIABLE result)
      if(NOT result EQUAL 0)
        message(FATAL_ERROR
          "${NAME}: cannot compile the seed ${program} for ${target}")
      endif()
    endforeach()
  endforeach()
endif()

set(dictionary)
if(DICTIONARY)
  set(dictionary -dict=${DICTIONARY})
endif()
kiln_fuzz_run(${NAME} -timeout=30 -rss_limit_mb=2048 ${dictionary})
