/* Placeholder: being written (issue 3).  */
typedef int ok_placeholder_mem_pool_c;
