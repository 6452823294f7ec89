# Runs the .kfb reader fuzzer for a bounded number of inputs; the ctest entry
# kfb-fuzz (see CMakeLists.txt). The seeds are the suite's programs - every
# test/e2e/*.mlir, examples/models/*.mlir and test/kfb/roundtrip.mlir -
# written as .kfb files at the time of the run, so that programs added later
# join the corpus. The corpus starts empty every time and the fuzzer's seed
# is fixed, so a run explores the same inputs each time.
#
#   cmake -DFUZZER=... -DTRANSLATE=... -DSOURCE_DIR=... -DWORK_DIR=...
#         -DRUNS=... -DMAX_SECONDS=... -P RunFuzzer.cmake

foreach(variable FUZZER TRANSLATE SOURCE_DIR WORK_DIR RUNS MAX_SECONDS)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "RunFuzzer.cmake: ${variable} is not set")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/seeds ${WORK_DIR}/corpus)

file(GLOB programs
  ${SOURCE_DIR}/test/e2e/*.mlir
  ${SOURCE_DIR}/examples/models/*.mlir
  ${SOURCE_DIR}/test/kfb/roundtrip.mlir)
foreach(program ${programs})
  get_filename_component(name ${program} NAME_WE)
  get_filename_component(directory ${program} DIRECTORY)
  get_filename_component(directory ${directory} NAME)
  set(seed ${WORK_DIR}/seeds/${directory}-${name}.kfb)
  execute_process(
    COMMAND ${TRANSLATE} --mlir-to-kfb ${program} -o ${seed}
    RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "kfb-fuzz: cannot write a seed from ${program}")
  endif()
endforeach()
list(LENGTH programs count)
message(STATUS "kfb-fuzz: ${count} seeds, ${RUNS} runs")

# The fuzzer writes the input of any crash, leak or timeout next to the
# corpus, and exits with a non-zero status.
execute_process(
  COMMAND ${FUZZER}
          -runs=${RUNS} -max_total_time=${MAX_SECONDS} -seed=1
          -timeout=30 -rss_limit_mb=2048 -print_final_stats=1
          -artifact_prefix=${WORK_DIR}/
          ${WORK_DIR}/corpus ${WORK_DIR}/seeds
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR
    "kfb-fuzz: the fuzzer failed (exit status ${result}); the input that "
    "made it fail is in ${WORK_DIR}")
endif()
