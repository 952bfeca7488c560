# Shows that cmake/fp_env_check.c (the configure-time guard) passes with the
# project's flags and fails for each kind of float environment it must reject.
# Inputs: CC, SRC, WORK.
file(MAKE_DIRECTORY ${WORK})
function(try_flags name expect)
  execute_process(COMMAND ${CC} -O2 ${ARGN} ${SRC} -o ${WORK}/${name}
                  RESULT_VARIABLE crc OUTPUT_QUIET ERROR_QUIET)
  set(outcome "compile-error")
  if(crc EQUAL 0)
    execute_process(COMMAND ${WORK}/${name} RESULT_VARIABLE rrc OUTPUT_QUIET ERROR_QUIET)
    set(outcome "run-fail")
    if(rrc EQUAL 0)
      set(outcome "pass")
    endif()
  endif()
  if(NOT outcome STREQUAL expect)
    message(FATAL_ERROR "${name} (${ARGN}): expected ${expect}, got ${outcome}")
  endif()
  message(STATUS "${name}: ${outcome} as expected")
endfunction()
try_flags(project_flags pass -ffp-contract=off -fno-fast-math)
try_flags(fast_math compile-error -ffast-math)
try_flags(x87_excess_precision compile-error -mfpmath=387)
# Contraction needs an FMA unit to show; on a CPU without one the run faults,
# which the guard counts as a failure too.
try_flags(fma_contraction run-fail -mfma -ffp-contract=fast)
