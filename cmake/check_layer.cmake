# One layer's include check (CMakeLists.txt, check_layers): every include of
# a project header ("folder/file.h" or <folder/file.h>, found in the source
# tree) in the layer's FILES must name a header that the layer itself or a
# library it links owns (ALLOWED: folders, or single headers). Other headers
# (the system's, LibTorch's, generated ones) are not the project's layers.
# Fails naming the file, the header and the layers it may use.
cmake_minimum_required(VERSION 3.18)
foreach(file ${FILES})
  file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
  foreach(line ${lines})
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]+)[\">].*" "\\1" header "${line}")
    get_filename_component(folder "${header}" DIRECTORY)
    if(folder STREQUAL "" OR NOT EXISTS ${ROOT}/${header})  # not the project's
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
