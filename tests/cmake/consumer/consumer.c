/* C through gbs::gbs: the version of the header and of the library agree. */
#include <gbs.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  char want[64];
  snprintf(want, sizeof want, "%d.%d.%d", GBS_VERSION_MAJOR, GBS_VERSION_MINOR,
           GBS_VERSION_PATCH);
  printf("consumer_c: libgbs %s, header %s\n", gbs_version(), want);
  return strcmp(gbs_version(), want) == 0 && gbs_abi_version() == GBS_ABI_VERSION ? 0 : 1;
}
