# The installable library of the C++ API (include/cbtrain/cbtrain.h) with its CMake package
# (find_package(cbtrain), target cbtrain::cbtrain), and a .deb through CPack.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

add_library(cbtrain_lib SHARED)
add_library(cbtrain::cbtrain ALIAS cbtrain_lib)
cbt_link_all(cbtrain_lib)
set_target_properties(cbtrain_lib PROPERTIES OUTPUT_NAME cbtrain EXPORT_NAME cbtrain
                      VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
                      INSTALL_RPATH_USE_LINK_PATH ON)
target_include_directories(cbtrain_lib PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                              $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(cbtrain_lib PUBLIC cxx_std_17)

install(TARGETS cbtrain_lib EXPORT cbtrainTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/cbtrain/cbtrain.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cbtrain)
set(_cbt_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/cbtrain)
install(EXPORT cbtrainTargets NAMESPACE cbtrain:: DESTINATION ${_cbt_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cbtrainConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/cbtrainConfig.cmake
                              INSTALL_DESTINATION ${_cbt_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cbtrainConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cbtrainConfig.cmake ${PROJECT_BINARY_DIR}/cbtrainConfigVersion.cmake
        DESTINATION ${_cbt_cmake_dir})
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

# .deb: `cpack -G DEB` in the build folder. Debian's dependencies come from dpkg-shlibdeps;
# the CUDA libraries (toolkit, cuDNN, NCCL) are not Debian packages and are left out.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cbtrain)
set(CPACK_PACKAGE_VENDOR "cbtrain")
set(CPACK_PACKAGE_CONTACT "cbtrain developers <cbtrain@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "train ONNX models on CPUs and GPUs with Crossbow-style model averaging")
set(CPACK_PACKAGE_INSTALL_DIRECTORY cbtrain)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(CBT_WITH_CUDA)
  get_filename_component(_cudnn_dir "${CUDNN_LIBRARY}" DIRECTORY)
  get_filename_component(_nccl_dir "${NCCL_LIBRARY}" DIRECTORY)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CUDAToolkit_LIBRARY_DIR} ${_cudnn_dir} ${_nccl_dir})
endif()
include(CPack)
