# Install rules (included by CMakeLists.txt when EC_INSTALL is on).  Components: `runtime`
# (libepochcast.so.N, the CLI and its manual, the Lua module, models/, scenarios/, docs), `dev`
# (header, the .so link, libepochcast.a, epochcast.pc, the CMake package) and `mpi`
# (epochcast-mpi, when CMake found MPI); CPack makes one Debian package of each.
#
#   PREFIX/include/epochcast.h
#   PREFIX/LIBDIR/libepochcast.so{,.N,.VERSION}, libepochcast.a
#   PREFIX/LIBDIR/pkgconfig/epochcast.pc
#   PREFIX/LIBDIR/cmake/epochcast/epochcastConfig.cmake (+ Version, Targets, Deps)
#   PREFIX/bin/epochcast, PREFIX/bin/epochcast-mpi                (MPI found)
#   PREFIX/share/man/man1/epochcast.1.gz, epochcast-mpi.1.gz     (a link to it)
#   PREFIX/share/epochcast/scenarios/
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
  # Requires: what the header's users call themselves (GSL); Requires.private / Libs.private:
  # what only the library calls (pkg-config --static).
  string(JOIN " " EC_PC_REQUIRES ${EPOCHCAST_PUBLIC_PKG_DEPS})
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
if(EC_MAN_PAGE)
  install(FILES ${EC_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT runtime)
endif()
# epochcast-mpi, the CLI with MPI (lua/CMakeLists.txt), in a component and package of its own:
# the epochcast package does not depend on MPI.  Its manual is epochcast(1), by a link.
if(TARGET epochcast-mpi)
  install(TARGETS epochcast-mpi RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT mpi)
  if(EC_MAN_PAGE)
    get_filename_component(ec_man_name ${EC_MAN_PAGE} NAME)
    string(REPLACE "epochcast." "epochcast-mpi." ec_mpi_man_name ${ec_man_name})
    file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/man)
    file(CREATE_LINK ${ec_man_name} ${PROJECT_BINARY_DIR}/man/${ec_mpi_man_name} SYMBOLIC)
    install(FILES ${PROJECT_BINARY_DIR}/man/${ec_mpi_man_name} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
            COMPONENT mpi)
  endif()
endif()
if(TARGET epochcast_lua)
  install(TARGETS epochcast_lua LIBRARY DESTINATION ${EC_INSTALL_CMOD} COMPONENT runtime)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/models/ DESTINATION ${EC_INSTALL_MODELS} COMPONENT runtime)
# the scenarios, to run in place (epochcast run PREFIX/share/epochcast/scenarios/quickstart.lua:
# they find their lib/ beside them and write into the current folder) or to copy
if(EXISTS ${PROJECT_SOURCE_DIR}/scenarios)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenarios/ DESTINATION ${CMAKE_INSTALL_DATADIR}/epochcast/scenarios
          COMPONENT runtime)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)
if(EXISTS ${PROJECT_SOURCE_DIR}/docs)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT runtime)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT dev)
