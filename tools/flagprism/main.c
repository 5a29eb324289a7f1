/* placeholder until the CLI lands */
#include <stdio.h>
#include <flagprism/version.h>
int main(void) { printf("flagprism %s\n", fp_version_string()); return 0; }
