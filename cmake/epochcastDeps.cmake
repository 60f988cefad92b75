# The core library's link dependencies, one line each: adding one is one ec_dependency() line.
# core/CMakeLists.txt links them, epochcast.pc lists them (Requires.private / Libs.private),
# the installed epochcastConfig.cmake finds them again for programs that link libepochcast.a
# (libepochcast.so carries its own), and the epochcast-dev Debian package depends on DEB.
#   ec_dependency(PKG <pkg-config module> DEB <Debian -dev package>)
#   ec_dependency(LIB <library linked as -l<name>, no .pc file> [DEB <package>])
set(EPOCHCAST_PKG_DEPS "")
set(EPOCHCAST_LIB_DEPS "")
set(EPOCHCAST_DEB_DEPS "")
macro(ec_dependency kind name)
  if("${kind}" STREQUAL "PKG")
    list(APPEND EPOCHCAST_PKG_DEPS ${name})
  else()
    list(APPEND EPOCHCAST_LIB_DEPS ${name})
  endif()
  if("${ARGV2}" STREQUAL "DEB")
    list(APPEND EPOCHCAST_DEB_DEPS ${ARGV3})
  endif()
endmacro()

ec_dependency(PKG gsl DEB libgsl-dev)
ec_dependency(PKG jansson DEB libjansson-dev)
ec_dependency(LIB csv DEB libcsv-dev)
ec_dependency(LIB m)
