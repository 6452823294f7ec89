# Runs the ONNX importer fuzzer for a bounded number of inputs; the ctest
# entry onnx-fuzz (see CMakeLists.txt). The seeds are the model.onnx files
# of ONNX's backend test data (Debian's libonnx-testdata) and the models in
# examples/onnx. The corpus starts empty and the seed is fixed, so a run
# explores the same inputs each time.
#
#   cmake -DFUZZER=... -DDATA_DIR=... -DSOURCE_DIR=... -DWORK_DIR=...
#         -DRUNS=... -DMAX_SECONDS=... -P RunFuzzer.cmake

foreach(variable FUZZER DATA_DIR SOURCE_DIR WORK_DIR RUNS MAX_SECONDS)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "RunFuzzer.cmake: ${variable} is not set")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/seeds ${WORK_DIR}/corpus)
file(GLOB_RECURSE models ${DATA_DIR}/*/model.onnx
     ${SOURCE_DIR}/examples/onnx/*.onnx)
set(index 0)
foreach(model ${models})
  math(EXPR index "${index} + 1")
  file(COPY_FILE ${model} ${WORK_DIR}/seeds/seed-${index}.onnx)
endforeach()
message(STATUS "onnx-fuzz: ${index} seeds, ${RUNS} runs")

execute_process(
  COMMAND ${FUZZER}
          -runs=${RUNS} -max_total_time=${MAX_SECONDS} -seed=1
          -timeout=30 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1
          -artifact_prefix=${WORK_DIR}/
          ${WORK_DIR}/corpus ${WORK_DIR}/seeds
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR
    "onnx-fuzz: the fuzzer failed (exit status ${result}); the input that "
    "made it fail is in ${WORK_DIR}")
endif()
