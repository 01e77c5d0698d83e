# The version check of et_ops-config.cmake: the one of et_opsConfig.cmake.
include("${CMAKE_CURRENT_LIST_DIR}/et_opsConfigVersion.cmake")
