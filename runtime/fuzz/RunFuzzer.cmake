# Runs one of the runtime's fuzzers for a bounded number of inputs: the
# ctest entries kmod-fuzz and npy-fuzz (see CMakeLists.txt). The corpus
# starts from the seeds every time and the fuzzer's seed is fixed, so a run
# explores the same inputs each time.
#
#   cmake -DFUZZER=... -DWORK_DIR=... -DRUNS=... -DMAX_SECONDS=...
#         [-DSEEDS=files and directories] [-DCOMPILE=kiln-compile
#          -DPROGRAMS=programs to compile into seeds] [-DDICTIONARY=...]
#         -P RunFuzzer.cmake

foreach(variable FUZZER WORK_DIR RUNS MAX_SECONDS)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "RunFuzzer.cmake: ${variable} is not set")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/seeds ${WORK_DIR}/corpus)

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
        message(FATAL_ERROR "cannot compile the seed ${program} for ${target}")
      endif()
    endforeach()
  endforeach()
endif()

file(GLOB seeds ${WORK_DIR}/seeds/*)
list(LENGTH seeds count)
message(STATUS "${count} seeds, ${RUNS} runs")

set(dictionary)
if(DICTIONARY)
  set(dictionary -dict=${DICTIONARY})
endif()
# The fuzzer writes the input of any crash, leak or timeout next to the
# corpus, and exits with a non-zero status.
execute_process(
  COMMAND ${FUZZER}
          -runs=${RUNS} -max_total_time=${MAX_SECONDS} -seed=1
          -timeout=30 -rss_limit_mb=2048 -print_final_stats=1
          ${dictionary} -artifact_prefix=${WORK_DIR}/
          ${WORK_DIR}/corpus ${WORK_DIR}/seeds
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR
    "the fuzzer failed (exit status ${result}); the input that made it fail "
    "is in ${WORK_DIR}")
endif()
