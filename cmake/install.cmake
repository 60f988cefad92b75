# Install rules (included by CMakeLists.txt when EC_INSTALL is on).  Components: `runtime`
# (libepochcast.so.N, the CLI, the Lua module, models/, docs) and `dev` (header, the .so
# link, libepochcast.a, epochcast.pc, the CMake package); CPack makes one Debian package of each.
#
#   PREFIX/include/epochcast.h
#   PREFIX/LIBDIR/libepochcast.so{,.N,.VERSION}, libepochcast.a
#   PREFIX/LIBDIR/pkgconfig/epochcast.pc
#   PREFIX/LIBDIR/cmake/epochcast/epochcastConfig.cmake (+ Version, Targets, Deps)
#   PREFIX/bin/epochcast
#   PREFIX/lib/lua/5.4/epochcast.so                      (EC_INSTALL_CMOD)
#   PREFIX/share/epochcast/models/                       (EC_INSTALL_MODELS)
#   PREFIX/share/doc/epochcast/                          (README, docs/, examples/)
include(CMakePackageConfigHelpers)
set(EC_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/epochcast")

if(EC_INSTALL_LIBRARY)
  install(TARGETS epochcast_shared epochcast_static EXPORT epochcastTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
  install(FILES ${PROJECT_SOURCE_DIR}/core/include/epochcast.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)

  # CMake package: find_package(epochcast) gives epochcast::epochcast (shared) and
  # epochcast::epochcast_static.
  install(EXPORT epochcastTargets NAMESPACE epochcast:: DESTINATION ${EC_CMAKE_DIR} COMPONENT dev)
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/epochcastConfig.cmake.in
                                ${PROJECT_BINARY_DIR}/epochcastConfig.cmake
                                INSTALL_DESTINATION ${EC_CMAKE_DIR} PATH_VARS EC_INSTALL_MODELS)
  # 0.x: a new minor version may break the API, so only the same minor version is compatible.
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/epochcastConfigVersion.cmake
                                   COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/epochcastConfig.cmake
                ${PROJECT_BINARY_DIR}/epochcastConfigVersion.cmake
                ${PROJECT_SOURCE_DIR}/cmake/epochcastDeps.cmake
          DESTINATION ${EC_CMAKE_DIR} COMPONENT dev)

  # pkg-config: paths relative to the .pc file (${pcfiledir}), so a moved prefix still works.
  include(${PROJECT_SOURCE_DIR}/cmake/epochcastDeps.cmake)
  string(JOIN " " EC_PC_REQUIRES_PRIVATE ${EPOCHCAST_PKG_DEPS})
  set(EC_PC_LIBS_PRIVATE "")
  foreach(lib IN LISTS EPOCHCAST_LIB_DEPS CMAKE_DL_LIBS)
    string(APPEND EC_PC_LIBS_PRIVATE " -l${lib}")
  endforeach()
  string(STRIP "${EC_PC_LIBS_PRIVATE}" EC_PC_LIBS_PRIVATE)
  set(ec_pcdir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
  if(IS_ABSOLUTE "${ec_pcdir}")
    set(EC_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  else()
    file(RELATIVE_PATH ec_up "/prefix/${ec_pcdir}" "/prefix")
    string(REGEX REPLACE "/+$" "" ec_up "${ec_up}")
    set(EC_PC_PREFIX "\${pcfiledir}/${ec_up}")
  endif()
  foreach(dir LIBDIR INCLUDEDIR DATADIR)
    if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
      set(EC_PC_${dir} "${CMAKE_INSTALL_${dir}}")
    else()
      set(EC_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
    endif()
  endforeach()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/epochcast.pc.in ${PROJECT_BINARY_DIR}/epochcast.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/epochcast.pc DESTINATION ${ec_pcdir} COMPONENT dev)
endif()

if(TARGET epochcast)
  install(TARGETS epochcast RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
endif()
if(TARGET epochcast_lua)
  install(TARGETS epochcast_lua LIBRARY DESTINATION ${EC_INSTALL_CMOD} COMPONENT runtime)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/models/ DESTINATION ${EC_INSTALL_MODELS} COMPONENT runtime)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)
if(EXISTS ${PROJECT_SOURCE_DIR}/docs)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT runtime)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT dev)
