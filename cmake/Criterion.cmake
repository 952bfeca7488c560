# bitgate_test(NAME SOURCES... LABELS l1 l2 LIBS lib...): a Criterion test
# binary registered with CTest under the given labels.
find_library(CRITERION_LIB criterion REQUIRED)
function(bitgate_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LABELS;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${CRITERION_LIB} ${T_LIBS})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR})
  # A GPU test takes one GPU: with `ctest --resource-spec-file FILE -j N`
  # (example: ci/resources.example.json) CTest spreads the GPU tests across
  # the GPUs, and ci/ctest_gpu.sh points each at its own; without a spec
  # file CTest ignores RESOURCE_GROUPS and the wrapper changes nothing.
  if("gpu" IN_LIST T_LABELS)
    add_test(NAME ${name} COMMAND sh ${CMAKE_SOURCE_DIR}/ci/ctest_gpu.sh $<TARGET_FILE:${name}> --jobs 2)
    set_tests_properties(${name} PROPERTIES RESOURCE_GROUPS "gpus:1")
  else()
    add_test(NAME ${name} COMMAND ${name} --jobs 2)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}"
    ENVIRONMENT "ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=1;BITGATE_SOURCE_DIR=${CMAKE_SOURCE_DIR}"
    SKIP_RETURN_CODE 77)
endfunction()
