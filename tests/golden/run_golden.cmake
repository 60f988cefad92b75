# run_golden.cmake: run one scenario through the CLI and compare its stdout with the golden
# file (numbers within a relative tolerance, see compare.lua).  Invoked by tests/CMakeLists.txt:
#   cmake -DCLI=... -DLUA=... -DSCENARIO=... -DGOLDEN=... -DCOMPARE=... -DWORKDIR=... -P run_golden.cmake
# With EC_UPDATE_GOLDEN=1 in the environment it rewrites GOLDEN instead: update golden files
# deliberately, with that flag, never by hand.
foreach(var CLI LUA SCENARIO GOLDEN COMPARE WORKDIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_golden.cmake: -D${var}=... is required")
  endif()
endforeach()

# A fresh folder each time, so files the scenario writes cannot go stale.
file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")
execute_process(COMMAND "${CLI}" run "${SCENARIO}"
                WORKING_DIRECTORY "${WORKDIR}"
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${SCENARIO} failed (exit ${rc}):\n${err}\nstdout was:\n${out}")
endif()
if(NOT err STREQUAL "")
  message(STATUS "stderr of ${SCENARIO}:\n${err}")
endif()

# Output is read in a terminal: no line wider than 100 columns (issue 41), checked before a
# golden file is written too.
string(REPEAT "[^\n]" 101 wide_pattern)
string(REGEX MATCH "${wide_pattern}[^\n]*" wide_line "${out}")
if(wide_line)
  string(LENGTH "${wide_line}" wide_len)
  message(FATAL_ERROR "${SCENARIO} prints a line of ${wide_len} columns (at most 100):\n${wide_line}")
endif()

if("$ENV{EC_UPDATE_GOLDEN}" STREQUAL "1")
  file(WRITE "${GOLDEN}" "${out}")
  message(STATUS "updated ${GOLDEN}")
  return()
endif()

if(NOT EXISTS "${GOLDEN}")
  message(FATAL_ERROR "no golden file ${GOLDEN}; create it with EC_UPDATE_GOLDEN=1")
endif()
set(actual "${WORKDIR}/actual.out")
file(WRITE "${actual}" "${out}")
execute_process(COMMAND "${LUA}" "${COMPARE}" "${GOLDEN}" "${actual}"
                OUTPUT_VARIABLE diff ERROR_VARIABLE diff RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "output of ${SCENARIO} differs from ${GOLDEN}:\n${diff}"
                      "(if the change is intended: EC_UPDATE_GOLDEN=1 ctest -R golden)")
endif()
message(STATUS "${SCENARIO}: output matches ${GOLDEN}")
