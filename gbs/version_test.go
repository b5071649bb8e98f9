package gbs

import (
	"fmt"
	"os"
	"regexp"
	"testing"
)

// TestVersionMatchesHeader checks Version against the GBS_VERSION_*
// macros of include/gbs.h, the one version number.
func TestVersionMatchesHeader(t *testing.T) {
	src, err := os.ReadFile("../include/gbs.h")
	if err != nil {
		t.Fatal(err)
	}
	var parts [3]string
	for i, name := range []string{"MAJOR", "MINOR", "PATCH"} {
		m := regexp.MustCompile(`(?m)^#define GBS_VERSION_` + name + `\s+(\d+)\s*$`).FindSubmatch(src)
		if m == nil {
			t.Fatalf("include/gbs.h has no #define GBS_VERSION_%s", name)
		}
		parts[i] = string(m[1])
	}
	header := fmt.Sprintf("%s.%s.%s", parts[0], parts[1], parts[2])
	if Version != header {
		t.Errorf("gbs.Version = %q, include/gbs.h says %q", Version, header)
	}
}
