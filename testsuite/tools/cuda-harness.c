/* Placeholder: being written (issue 3).  */
int main (void) { return 0; }
