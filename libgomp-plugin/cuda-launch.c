/* Placeholder: being written (issue 3).  */
typedef int ok_placeholder_cuda_launch_c;
