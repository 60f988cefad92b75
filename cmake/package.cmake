# CPack: `cpack -G DEB` (in the build folder) makes Debian packages from the install
# components: epochcast (libepochcast.so.N, the CLI and epochcast(1), the Lua module, models/,
# scenarios/, docs), epochcast-dev (header, libepochcast.a, the .so link, epochcast.pc, the
# CMake package) and, when CMake found MPI, epochcast-mpi (epochcast-mpi, the CLI built with
# MPI: MPI is optional, so only this package depends on Open MPI).  Shared-library dependencies
# come from dpkg-shlibdeps; `cpack -G TGZ` makes a tarball.
set(CPACK_PACKAGE_NAME epochcast)
set(CPACK_PACKAGE_VENDOR "epochcast")
set(CPACK_PACKAGE_CONTACT "epochcast maintainers <epochcast@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_RESOURCE_FILE_README ${PROJECT_SOURCE_DIR}/README.md)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL runtime dev)
if(TARGET epochcast-mpi)
  list(APPEND CPACK_COMPONENTS_ALL mpi)
endif()
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "Predicts deep-learning training step time, epoch time and GPU memory before anyone rents a GPU: the library, the epochcast command, the Lua 5.4 module and the hardware data.")
set(CPACK_COMPONENT_DEV_DESCRIPTION "Header, static library, pkg-config file and CMake package of libepochcast.")
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
set(CPACK_COMPONENT_MPI_DESCRIPTION
    "epochcast-mpi: the epochcast command built with Open MPI; under mpirun a sweep or a layout search is split over the processes.")
set(CPACK_COMPONENT_MPI_DEPENDS runtime)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME epochcast)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SUGGESTS "lua5.4, gnuplot-nox, epochcast-mpi")
set(CPACK_DEBIAN_MPI_PACKAGE_NAME epochcast-mpi)
set(CPACK_DEBIAN_MPI_PACKAGE_RECOMMENDS "openmpi-bin") # mpirun
set(CPACK_DEBIAN_DEV_PACKAGE_NAME epochcast-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# What a program linking libepochcast.a needs, and what epochcast.pc's Requires.private names.
include(${PROJECT_SOURCE_DIR}/cmake/epochcastDeps.cmake)
string(JOIN ", " CPACK_DEBIAN_DEV_PACKAGE_DEPENDS ${EPOCHCAST_DEB_DEPS} "pkg-config | pkgconf")

include(CPack)
