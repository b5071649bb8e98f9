/* The one version number: gbs_version() of the library must be the
 * header's GBS_VERSION_MAJOR.MINOR.PATCH, and gbs_abi_version() its
 * GBS_ABI_VERSION. */
#include "common.h"

int main(void) {
  char want[64];
  snprintf(want, sizeof want, "%d.%d.%d", GBS_VERSION_MAJOR, GBS_VERSION_MINOR,
           GBS_VERSION_PATCH);
  const char *got = gbs_version();
  CHECK(got != NULL && strcmp(got, want) == 0, "gbs_version() = \"%s\", header %s",
        got ? got : "(null)", want);
  CHECK(gbs_abi_version() == GBS_ABI_VERSION, "gbs_abi_version() = %d, header %d",
        gbs_abi_version(), GBS_ABI_VERSION);
  printf("gbs %s, ABI %d\n", got, gbs_abi_version());
  return test_summary("test_version");
}
