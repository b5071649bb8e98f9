package provenance

import (
	"regexp"
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		rev   string
		dirty bool
		want  string
	}{
		{"", false, ""},
		{"644d1db6e0c4", false, "644d1db"},
		{"644d1db6e0c4", true, "644d1db+dirty"},
		{"abc", false, "abc"},
	} {
		if got := format(c.rev, c.dirty); got != c.want {
			t.Errorf("format(%q, %v) = %q, want %q", c.rev, c.dirty, got, c.want)
		}
	}
}

func TestCommitAndDate(t *testing.T) {
	// The tests run inside the repository's checkout, or from a copy
	// without git: either a short hash or "unknown".
	if c := Commit(); !regexp.MustCompile(`^([0-9a-f]{7}(\+dirty)?|unknown)$`).MatchString(c) {
		t.Errorf("Commit() = %q", c)
	}
	if _, err := time.Parse("2006-01-02", Date()); err != nil {
		t.Errorf("Date() = %q: %v", Date(), err)
	}
}
