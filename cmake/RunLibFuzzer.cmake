# What the fuzzers' bounded ctest runs share (the RunFuzzer.cmake scripts of
# ir/fuzz, compiler/fuzz, compiler/onnx/fuzz and runtime/fuzz, run with
# cmake -P): each writes its seeds into WORK_DIR/seeds, then runs its fuzzer
# from an empty corpus with a fixed seed, so a run explores the same inputs
# each time.

# Fails unless every named variable was given (-D); empties WORK_DIR and
# makes its seeds/ and corpus/ directories.
macro(kiln_fuzz_begin)
  foreach(variable FUZZER WORK_DIR RUNS MAX_SECONDS ${ARGN})
    if(NOT DEFINED ${variable})
      message(FATAL_ERROR "${CMAKE_SCRIPT_MODE_FILE}: ${variable} is not set")
    endif()
  endforeach()
  file(REMOVE_RECURSE ${WORK_DIR})
  file(MAKE_DIRECTORY ${WORK_DIR}/seeds ${WORK_DIR}/corpus)
endmacro()

# Runs FUZZER on WORK_DIR/seeds for RUNS inputs or MAX_SECONDS, whichever
# comes first, with the fuzzer's options in ARGN (-timeout=, -max_len=,
# -dict=, ...). The fuzzer writes the input of any crash, leak or timeout
# into WORK_DIR and exits with a non-zero status, which fails the test.
function(kiln_fuzz_run name)
  file(GLOB seeds ${WORK_DIR}/seeds/*)
  list(LENGTH seeds count)
  message(STATUS "${name}: ${count} seeds, ${RUNS} runs")
  execute_process(
    COMMAND ${FUZZER}
            -runs=${RUNS} -max_total_time=${MAX_SECONDS} -seed=1
            -print_final_stats=1 ${ARGN} -artifact_prefix=${WORK_DIR}/
            ${WORK_DIR}/corpus ${WORK_DIR}/seeds
    RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR
      "${name}: the fuzzer failed (exit status ${result}); the input that "
      "made it fail is in ${WORK_DIR}")
  endif()
endfunction()
