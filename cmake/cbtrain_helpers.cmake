# Helpers shared by the folder CMakeLists: one object library per folder, one link helper.
set(CBT_WARNINGS -Wall -Wextra -Wno-unused-parameter)

# cbt_object_library(NAME GLOBS...): an OBJECT library from the sources matching GLOBS.
# Object libraries keep the static registrars of ops and schemas in every executable.
function(cbt_object_library name)
  file(GLOB _srcs CONFIGURE_DEPENDS ${ARGN})
  if(NOT _srcs)
    # A folder may be empty while it is being written; keep the target so links stay valid.
    set(_empty ${PROJECT_BINARY_DIR}/empty_${name}.cpp)
    file(WRITE ${_empty} "// empty object library ${name}\n")
    set(_srcs ${_empty})
  endif()
  add_library(${name} OBJECT ${_srcs})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${CBT_WARNINGS}>)
endfunction()

# cbt_link_all(TARGET): links every cbtrain object library and its dependencies.
function(cbt_link_all target)
  target_link_libraries(${target} PRIVATE cbt_graph cbt_ops cbt_onnx_import cbt_tensorboard cbt_runtime)
  if(CBT_WITH_CUDA)
    target_link_libraries(${target} PRIVATE cbt_ops_cuda cbt_runtime_cuda)
  endif()
  if(CBT_WITH_MPI)
    target_link_libraries(${target} PRIVATE cbt_runtime_mpi)
  endif()
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
endfunction()
