# CUDA toolkit, cuDNN and NCCL. cuDNN and NCCL may live outside the toolkit (e.g. in a
# Python environment): point CBT_CUDNN_ROOT / CBT_NCCL_ROOT at their folders.
find_package(CUDAToolkit REQUIRED)
set(CBT_CUDNN_ROOT "" CACHE PATH "folder with include/cudnn.h and lib/libcudnn.so")
set(CBT_NCCL_ROOT "" CACHE PATH "folder with include/nccl.h and lib/libnccl.so")

function(cbt_find_cuda_lib name header lib root)
  find_path(${name}_INCLUDE_DIR ${header} HINTS ${root}/include ${CUDAToolkit_INCLUDE_DIRS} REQUIRED)
  find_library(${name}_LIBRARY NAMES ${lib} lib${lib}.so.9 lib${lib}.so.2
               HINTS ${root}/lib ${root}/lib64 ${CUDAToolkit_LIBRARY_DIR} REQUIRED)
  add_library(cbt::${lib} UNKNOWN IMPORTED)
  set_target_properties(cbt::${lib} PROPERTIES IMPORTED_LOCATION ${${name}_LIBRARY}
                        INTERFACE_INCLUDE_DIRECTORIES ${${name}_INCLUDE_DIR})
  message(STATUS "cbtrain: ${lib} at ${${name}_LIBRARY}")
endfunction()

cbt_find_cuda_lib(CUDNN cudnn.h cudnn "${CBT_CUDNN_ROOT}")
cbt_find_cuda_lib(NCCL nccl.h nccl "${CBT_NCCL_ROOT}")
