/* Placeholder: being written (issue 3).  */
int fakecuda_placeholder;
