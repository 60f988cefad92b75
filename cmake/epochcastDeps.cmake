# The core library's link dependencies, one line each: adding one is one ec_dependency() line.
# core/CMakeLists.txt links them, epochcast.pc lists them, the installed epochcastConfig.cmake
# finds them again, and the epochcast-dev Debian package depends on DEB.
#   ec_dependency(PKG <pkg-config module> DEB <Debian -dev package> [PUBLIC <CMake package> <target>])
#   ec_dependency(LIB <library linked as -l<name>, no .pc file> [DEB <package>])
# Private (the default): only libepochcast calls it.  epochcast.pc lists it in Requires.private
# or Libs.private (pkg-config --static), and the CMake package gives it to programs that link
# libepochcast.a (libepochcast.so carries its own).
# PUBLIC: the public header's users call it too: epochcast.h and docs/c-api.md tell every host to
# call gsl_set_error_handler_off() (GSL's default handler aborts the process).  epochcast.pc
# lists it in Requires (`pkg-config --libs epochcast` gives -lgsl), and both CMake targets carry
# <target> in their link interface, found with find_package(<CMake package>) here and
# find_dependency(<CMake package>) in the installed epochcastConfig.cmake.
set(EPOCHCAST_PKG_DEPS "")        # private pkg-config modules
set(EPOCHCAST_PUBLIC_PKG_DEPS "") # public pkg-config modules
set(EPOCHCAST_PUBLIC_PACKAGES "") # their CMake packages (find_package / find_dependency)
set(EPOCHCAST_PUBLIC_TARGETS "")  # and the imported targets those define
set(EPOCHCAST_LIB_DEPS "")
set(EPOCHCAST_DEB_DEPS "")
macro(ec_dependency kind name)
  cmake_parse_arguments(_ec_dep "" "DEB" "PUBLIC" ${ARGN})
  if("${kind}" STREQUAL "PKG" AND _ec_dep_PUBLIC)
    list(APPEND EPOCHCAST_PUBLIC_PKG_DEPS ${name})
    list(GET _ec_dep_PUBLIC 0 _ec_dep_pkg)
    list(GET _ec_dep_PUBLIC 1 _ec_dep_target)
    list(APPEND EPOCHCAST_PUBLIC_PACKAGES ${_ec_dep_pkg})
    list(APPEND EPOCHCAST_PUBLIC_TARGETS ${_ec_dep_target})
  elseif("${kind}" STREQUAL "PKG")
    list(APPEND EPOCHCAST_PKG_DEPS ${name})
  else()
    list(APPEND EPOCHCAST_LIB_DEPS ${name})
  endif()
  if(_ec_dep_DEB)
    list(APPEND EPOCHCAST_DEB_DEPS ${_ec_dep_DEB})
  endif()
endmacro()

ec_dependency(PKG gsl DEB libgsl-dev PUBLIC GSL GSL::gsl) # the host calls gsl_set_error_handler_off()
ec_dependency(PKG jansson DEB libjansson-dev)
ec_dependency(LIB csv DEB libcsv-dev)
ec_dependency(LIB m)
ec_dependency(LIB pthread) # sweeps and searches on several threads (sweep.c, optimize.c, workers.c)
