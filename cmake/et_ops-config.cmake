# find_package(et_ops) also looks for this name: the configuration is et_opsConfig.cmake.
include("${CMAKE_CURRENT_LIST_DIR}/et_opsConfig.cmake")
