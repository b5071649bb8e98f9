package memlimit

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeRoot writes files under a temporary root, paths relative to it.
func fakeRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, s := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const meminfo = "MemTotal:       32000000 kB\nMemFree:         1000000 kB\nMemAvailable:   20000000 kB\n"

func TestAvailableUnder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  uint64
		ok    bool
	}{
		{"no meminfo", map[string]string{}, 0, false},
		{"meminfo only", map[string]string{"proc/meminfo": meminfo}, 20000000 * 1024, true},
		{"cgroup v2 unlimited", map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "0::/a\n",
			"sys/fs/cgroup/a/memory.max": "max\n", "sys/fs/cgroup/a/memory.current": "1000\n"}, 20000000 * 1024, true},
		{"cgroup v2 limit", map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "0::/a\n",
			"sys/fs/cgroup/a/memory.max": "1000000000\n", "sys/fs/cgroup/a/memory.current": "400000000\n"}, 600000000, true},
		{"cgroup v2 namespaced", map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "0::/\n",
			"sys/fs/cgroup/memory.max": "1000000000\n", "sys/fs/cgroup/memory.current": "0\n"}, 1000000000, true},
		{"cgroup v2 over its limit", map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "0::/a\n",
			"sys/fs/cgroup/a/memory.max": "1000\n", "sys/fs/cgroup/a/memory.current": "4000\n"}, 0, true},
		{"cgroup v1 limit", map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "4:memory:/b\n1:cpu:/\n0::/\n",
			"sys/fs/cgroup/memory/b/memory.limit_in_bytes": "2000000000\n", "sys/fs/cgroup/memory/b/memory.usage_in_bytes": "500000000\n"}, 1500000000, true},
		{"cgroup v1 unlimited", map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "4:memory:/b\n",
			"sys/fs/cgroup/memory/b/memory.limit_in_bytes": "9223372036854771712\n", "sys/fs/cgroup/memory/b/memory.usage_in_bytes": "5\n"}, 20000000 * 1024, true},
	} {
		got, ok := availableUnder(fakeRoot(t, tc.files))
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: got %d, %v; want %d, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		elem    int
		factors []int
		want    uint64
		ok      bool
	}{
		{8, []int{1000, 6}, 48000, true},
		{8, nil, 8, true},
		{8, []int{0, math.MaxInt}, 0, true},
		{8, []int{1 << 62}, 0, false},
		{8, []int{1 << 31, 1 << 31}, 0, false},
		{8, []int{-1}, 0, false},
		{1, []int{math.MaxInt}, math.MaxInt, true},
	} {
		got, ok := Bytes(tc.elem, tc.factors...)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Bytes(%d, %v) = %d, %v; want %d, %v", tc.elem, tc.factors, got, ok, tc.want, tc.ok)
		}
	}
}

func TestCheck(t *testing.T) {
	err := Check("n_q = 4611686018427387904 proposal draws of dimension 6", 8, 1<<62, 6)
	var me *Error
	if !errors.As(err, &me) || !me.Overflow || !strings.Contains(err.Error(), "n_q = 4611686018427387904") {
		t.Errorf("overflow: got %v", err)
	}
	if err := check("x", 48e12, 22.1e9); err == nil || err.Error() != "x need 48.0 TB; 22.1 GB are available" {
		t.Errorf("too large: got %v", err)
	}
	if err := check("x", 1e9, 2e9); err != nil {
		t.Errorf("fits: got %v", err)
	}
	if err := Check("small", 8, 1000); err != nil {
		t.Errorf("small: got %v", err)
	}
	// 10^12 draws of dimension 6 do not fit on any machine this runs on.
	if err := Check("n_q = 1000000000000 proposal draws of dimension 6", 8, 1e12, 6); err == nil {
		if _, ok := Available(); ok {
			t.Errorf("48 TB: no error")
		}
	}
}

func TestFormat(t *testing.T) {
	for b, want := range map[uint64]string{0: "0 B", 999: "999 B", 1000: "1.0 kB", 48e12: "48.0 TB", 22.1e9: "22.1 GB", math.MaxUint64: "18.4 EB"} {
		if got := Format(b); got != want {
			t.Errorf("Format(%d) = %q, want %q", b, got, want)
		}
	}
}
