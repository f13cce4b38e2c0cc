# One layer's include check (CMakeLists.txt, check_layers): every
# `#include "folder/file.h"` of the layer's FILES must name a header that the
# layer itself or a library it links owns (ALLOWED: folders, or single
# headers). Headers without a folder (generated ones) are not the project's
# layers. Fails naming the file, the header and the layers it may use.
cmake_minimum_required(VERSION 3.18)
foreach(file ${FILES})
  file(STRINGS ${file} lines REGEX "^#include \"")
  foreach(line ${lines})
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" header "${line}")
    get_filename_component(folder "${header}" DIRECTORY)
    if(folder STREQUAL "")
      continue()
    endif()
    if(NOT header IN_LIST ALLOWED AND NOT folder IN_LIST ALLOWED)
      file(RELATIVE_PATH where ${ROOT} ${file})
      list(JOIN ALLOWED ", " may)
      message(FATAL_ERROR "${where} includes \"${header}\": layer ${LAYER} does not depend on "
        "the library that owns ${folder}/ (it may include: ${may}). Declare the dependency "
        "in CMakeLists.txt if the layering allows it, or move the code to the layer it belongs to.")
    endif()
  endforeach()
endforeach()
