# SPDX-License-Identifier: Apache-2.0
# `cmake --install` for C users: libflagprism.a and libflagprism.so (when built), the public
# headers, the `flagprism` command, the CMake package FlagPrism (FlagPrismConfig.cmake, exported
# targets FlagPrism::*) and flagprism.pc. Included from the top-level CMakeLists.txt when
# FP_INSTALL is on and the build is not the Python wheel's (pyproject.toml installs that).
include(CMakePackageConfigHelpers)

set(FP_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/FlagPrism)
set(_fp_lib_targets flagprism_static flagprism_default)
if(FP_BUILD_SHARED)
  list(APPEND _fp_lib_targets flagprism_shared)
endif()
install(TARGETS ${_fp_lib_targets} EXPORT FlagPrismTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT FlagPrism_Development
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT FlagPrism_Runtime
    NAMELINK_COMPONENT FlagPrism_Development
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT FlagPrism_Runtime)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/flagprism
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT FlagPrism_Development
  FILES_MATCHING PATTERN "*.h")
if(TARGET flagprism_cli)
  install(TARGETS flagprism_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    COMPONENT FlagPrism_Runtime)
endif()

install(EXPORT FlagPrismTargets NAMESPACE FlagPrism:: DESTINATION ${FP_CMAKE_DIR}
  COMPONENT FlagPrism_Development)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/FlagPrismConfig.cmake.in
  ${PROJECT_BINARY_DIR}/FlagPrismConfig.cmake INSTALL_DESTINATION ${FP_CMAKE_DIR})
# 0.x: a new minor version may change the API, so only the same minor version is compatible.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_fp_compat SameMinorVersion)
else()
  set(_fp_compat SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/FlagPrismConfigVersion.cmake
  COMPATIBILITY ${_fp_compat})
install(FILES ${PROJECT_BINARY_DIR}/FlagPrismConfig.cmake
  ${PROJECT_BINARY_DIR}/FlagPrismConfigVersion.cmake
  DESTINATION ${FP_CMAKE_DIR} COMPONENT FlagPrism_Development)

# flagprism.pc finds its prefix from its own place (${pcfiledir}), so that `cmake --install
# --prefix` anywhere, or moving the tree, keeps it right; absolute install dirs are used as given.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(FP_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(FP_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(FP_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  file(RELATIVE_PATH _fp_up /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
  string(REGEX REPLACE "/$" "" _fp_up "${_fp_up}")
  set(FP_PC_PREFIX "\${pcfiledir}/${_fp_up}")
  set(FP_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(FP_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
set(FP_PC_DL "")
if(CMAKE_DL_LIBS)
  set(FP_PC_DL "-l${CMAKE_DL_LIBS}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/flagprism.pc.in ${PROJECT_BINARY_DIR}/flagprism.pc
  @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/flagprism.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT FlagPrism_Development)
