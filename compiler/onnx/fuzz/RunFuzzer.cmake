# Runs the ONNX importer fuzzer for a bounded number of inputs; the ctest
# entry onnx-fuzz (see CMakeLists.txt). The seeds are the model.onnx files
# of ONNX's backend test data (Debian's libonnx-testdata, and the current
# release's node tests in CURRENT_DATA_DIR where onnx.backend_current has
# written them) and the models in examples/onnx. The corpus starts empty and the seed is fixed, so a run
# explores the same inputs each time.
#
#   cmake -DFUZZER=... -DDATA_DIR=... [-DCURRENT_DATA_DIR=...]
#         -DSOURCE_DIR=... -DWORK_DIR=...
#         -DRUNS=... -DMAX_SECONDS=... -P RunFuzzer.cmake

include(${CMAKE_CURRENT_LIST_DIR}/../../../cmake/RunLibFuzzer.cmake)
kiln_fuzz_begin(DATA_DIR SOURCE_DIR)
file(GLOB_RECURSE models ${DATA_DIR}/*/model.onnx
     ${SOURCE_DIR}/examples/onnx/*.onnx)
if(DEFINED CURRENT_DATA_DIR AND IS_DIRECTORY ${CURRENT_DATA_DIR})
  file(GLOB_RECURSE current ${CURRENT_DATA_DIR}/*/model.onnx)
  list(APPEND models ${current})
endif()
set(index 0)
foreach(model ${models})
  math(EXPR index "${index} + 1")
  file(COPY_FILE ${model} ${WORK_DIR}/seeds/seed-${index}.onnx)
endforeach()

kiln_fuzz_run(onnx-fuzz -timeout=30 -rss_limit_mb=2048 -max_len=65536)
