# Runs the MLIR compile fuzzer for a bounded number of inputs; the ctest
# entry mlir-fuzz (see CMakeLists.txt). The seeds, written at the time of
# the run so that programs added later join them:
#   - each function of test/e2e/*.mlir and examples/models/*.mlir on its own
#     (whole files would make every run compile dozens of functions);
#   - kiln-program-fuzz's random programs of seeds 0 to 39;
#   - the programs in seeds/, written for the edges the others miss (zero
#     and huge dimensions, other dialects' ops, calls, stacks, collectives,
#     folds of division by zero and of casts out of range);
#   - the inputs in regressions/ (inputs that once crashed the compiler).
# The corpus starts empty and the fuzzer's seed is fixed, so a run explores
# the same inputs each time.
#
#   cmake -DFUZZER=... -DGENERATOR=... -DDICTIONARY=... -DSOURCE_DIR=...
#         -DWORK_DIR=... -DRUNS=... -DMAX_SECONDS=... -P RunFuzzer.cmake

include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/RunLibFuzzer.cmake)
kiln_fuzz_begin(GENERATOR DICTIONARY SOURCE_DIR)

# One seed per top-level func.func: the text from one "\nfunc.func" to the
# next (the first seed also holds the file's leading comments).
file(GLOB programs ${SOURCE_DIR}/test/e2e/*.mlir
     ${SOURCE_DIR}/examples/models/*.mlir)
foreach(program ${programs})
  get_filename_component(name ${program} NAME_WE)
  file(READ ${program} text)
  set(index 0)
  while(NOT text STREQUAL "")
    string(FIND "${text}" "\nfunc.func" first)
    if(first EQUAL -1)
      break()
    endif()
    math(EXPR rest "${first} + 1")
    string(SUBSTRING "${text}" ${rest} -1 text)
    string(FIND "${text}" "\nfunc.func" next)
    string(SUBSTRING "${text}" 0 ${next} function)
    math(EXPR index "${index} + 1")
    file(WRITE ${WORK_DIR}/seeds/${name}-${index}.mlir "${function}\n")
  endwhile()
endforeach()

foreach(seed RANGE 0 39)
  execute_process(
    COMMAND ${GENERATOR} --print ${seed}
    OUTPUT_FILE ${WORK_DIR}/seeds/program-${seed}.mlir
    RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "mlir-fuzz: kiln-program-fuzz --print ${seed} failed")
  endif()
endforeach()

file(GLOB regressions ${SOURCE_DIR}/compiler/fuzz/seeds/*.mlir
     ${SOURCE_DIR}/compiler/fuzz/regressions/*.mlir)
file(COPY ${regressions} DESTINATION ${WORK_DIR}/seeds)

kiln_fuzz_run(mlir-fuzz -timeout=60 -rss_limit_mb=4096 -max_len=8192
  -dict=${DICTIONARY})
