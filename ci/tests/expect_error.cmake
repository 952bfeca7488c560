# expect_error.cmake: runs PYTHON SCRIPT ARGS and passes only when it exits
# non-zero with MESSAGE (a regular expression) in its output and no Python
# traceback, so that a script's bad-input path stays a clear error.
#
#   cmake -DPYTHON=... -DSCRIPT=... -DARGS="a;b" -DMESSAGE=... -P expect_error.cmake
execute_process(COMMAND ${PYTHON} ${SCRIPT} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "${SCRIPT} exited 0 on bad input:\n${all}")
endif()
if(all MATCHES "Traceback")
  message(FATAL_ERROR "${SCRIPT} gave a traceback, not an error line:\n${all}")
endif()
if(NOT all MATCHES "${MESSAGE}")
  message(FATAL_ERROR "${SCRIPT}: no '${MESSAGE}' in:\n${all}")
endif()
message(STATUS "${SCRIPT}: ${all}")
