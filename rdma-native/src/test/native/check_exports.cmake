# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# ctest script: a library must export exactly the ALLOWED symbols (each of them) and no other
# function or object of ours (-fvisibility=hidden plus static JNI functions). Linker-defined
# markers (_init, _fini, _edata, _end, __bss_start) are allowed.
# Usage: cmake -DNM=<nm> -DLIB=<lib.so> "-DALLOWED=sym1;sym2" -P check_exports.cmake
cmake_minimum_required(VERSION 3.16)
execute_process(COMMAND "${NM}" -D --defined-only "${LIB}"
                OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -D ${LIB} failed (${rc})")
endif()

string(REPLACE "\n" ";" lines "${symbols}")
set(exported "")
foreach(line IN LISTS lines)
  if(line MATCHES "^[0-9a-fA-F]* +[A-Za-z] +([^ ]+)$")
    list(APPEND exported "${CMAKE_MATCH_1}")
  endif()
endforeach()

set(allowed ${ALLOWED} _init _fini _edata _end __bss_start)
set(unexpected "")
foreach(symbol IN LISTS exported)
  if(NOT symbol IN_LIST allowed)
    list(APPEND unexpected "${symbol}")
  endif()
endforeach()
foreach(required IN LISTS ALLOWED)
  if(NOT required IN_LIST exported)
    message(FATAL_ERROR "${LIB} does not export ${required}")
  endif()
endforeach()
if(unexpected)
  message(FATAL_ERROR "${LIB} exports more than its entry points: ${unexpected}")
endif()
message(STATUS "exports: ${exported}")
