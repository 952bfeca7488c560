# gen_suite_abort.cmake: a generator that aborts part-way leaves the suite file
# whole and no PATH.tmp behind (cases/tools/gen_suite.c).  Run by CTest:
#   cmake -DGEN=<gen_suite> -DSUITE=<corpus/gate.suite> -DWORK=<dir> -P gen_suite_abort.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(copy ${WORK}/gate.suite)
file(COPY_FILE ${SUITE} ${copy})

# The second group aborts after the first is generated.
execute_process(COMMAND ${CMAKE_COMMAND} -E env "GEN_SUITE_ABORT_IN=CSA ratio-128" ${GEN} ${copy}
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(rc EQUAL 0)
  message(FATAL_ERROR "gen_suite with GEN_SUITE_ABORT_IN set exited 0; the abort hook did not fire")
endif()
if(EXISTS ${copy}.tmp)
  message(FATAL_ERROR "an aborted gen_suite left ${copy}.tmp behind")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${SUITE} ${copy} RESULT_VARIABLE differ)
if(NOT differ EQUAL 0)
  message(FATAL_ERROR "an aborted gen_suite changed ${copy}")
endif()

# Control: without the hook the same copy is rewritten to the same bytes.
execute_process(COMMAND ${GEN} ${copy} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${SUITE} ${copy} RESULT_VARIABLE differ)
if(NOT rc EQUAL 0 OR NOT differ EQUAL 0 OR EXISTS ${copy}.tmp)
  message(FATAL_ERROR "gen_suite did not rewrite ${copy} as committed (exit ${rc})")
endif()
message(STATUS "gen_suite_abort: the aborted run left the suite whole and no .tmp; the plain run rewrote it")
