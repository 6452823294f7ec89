# Runs the .kfb reader fuzzer for a bounded number of inputs; the ctest entry
# kfb-fuzz (see CMakeLists.txt). The seeds are the suite's programs - every
# test/e2e/*.mlir, examples/models/*.mlir and test/kfb/roundtrip.mlir -
# written as .kfb files at the time of the run, so that programs added later
# join the corpus; but for programs holding a gradient's stacks
# (kiln.stack_*), which the format refuses by design (the kfb round-trip
# test checks the refusal). The corpus starts empty every time and the
# fuzzer's seed is fixed, so a run explores the same inputs each time.
#
#   cmake -DFUZZER=... -DTRANSLATE=... -DSOURCE_DIR=... -DWORK_DIR=...
#         -DRUNS=... -DMAX_SECONDS=... -P RunFuzzer.cmake

include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/RunLibFuzzer.cmake)
kiln_fuzz_begin(TRANSLATE SOURCE_DIR)

file(GLOB programs
  ${SOURCE_DIR}/test/e2e/*.mlir
  ${SOURCE_DIR}/examples/models/*.mlir
  ${SOURCE_DIR}/test/kfb/roundtrip.mlir)
foreach(program ${programs})
  get_filename_component(name ${program} NAME_WE)
  get_filename_component(directory ${program} DIRECTORY)
  get_filename_component(directory ${directory} NAME)
  set(seed ${WORK_DIR}/seeds/${directory}-${name}.kfb)
  file(READ ${program} text)
  string(FIND "${text}" "kiln.stack_" stack)
  if(NOT stack EQUAL -1)
    continue()
  endif()
  execute_process(
    COMMAND ${TRANSLATE} --mlir-to-kfb ${program} -o ${seed}
    RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "kfb-fuzz: cannot write a seed from ${program}")
  endif()
endforeach()

kiln_fuzz_run(kfb-fuzz -timeout=30 -rss_limit_mb=2048)
