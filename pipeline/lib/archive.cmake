# archive.cmake - merges static archives and objects into one (cmake -P; -DAR=ar -DMRI=script):
# `ar -M` reads the MRI script (CREATE, ADDLIB, ADDMOD, SAVE) that pipeline/lib/CMakeLists.txt
# generates for libvreuse.a.
execute_process(COMMAND ${AR} -M INPUT_FILE ${MRI} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "archive.cmake: ${AR} -M < ${MRI} failed: ${err}")
endif()
