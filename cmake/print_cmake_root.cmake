# Prints CMake's installation root (cmake -P print_cmake_root.cmake), where
# its package-file templates lie.
message("${CMAKE_ROOT}")
