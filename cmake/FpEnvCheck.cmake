# Configure-time guard for the frozen numerics: the host compiler, with the
# project's flags, must evaluate floats in their own precision and must not
# contract a*b+c into an FMA.  Either would make the oracle's bits depend on
# the machine.  See cmake/fp_env_check.c.
get_directory_property(_bg_opts COMPILE_OPTIONS)
string(REPLACE ";" " " _bg_opts "${_bg_opts}")
try_run(BITGATE_FP_RUN BITGATE_FP_COMPILE
  SOURCES ${CMAKE_SOURCE_DIR}/cmake/fp_env_check.c
  CMAKE_FLAGS "-DCMAKE_C_FLAGS=${CMAKE_C_FLAGS} ${_bg_opts} -O2"
  COMPILE_OUTPUT_VARIABLE _bg_fp_compile
  RUN_OUTPUT_VARIABLE _bg_fp_run)
if(NOT BITGATE_FP_COMPILE)
  message(FATAL_ERROR "floating-point environment check failed to compile "
                      "(__FLT_EVAL_METHOD__ != 0 or fast math?):\n${_bg_fp_compile}")
endif()
if(NOT BITGATE_FP_RUN EQUAL 0)
  message(FATAL_ERROR "floating-point environment check failed: ${_bg_fp_run}")
endif()
message(STATUS "bitgate: float environment ok (${_bg_fp_run})")
