package flow

import (
	"errors"
	"strings"
	"testing"
)

func TestUnlocked(t *testing.T) {
	want := errors.New("data error")
	if err := unlocked(func() error { return want }); err != want {
		t.Errorf("unlocked returned %v, want the function's error %v", err, want)
	}
	// A panic must reach the caller's goroutine, where the C ABI recovers
	// it; left in the fit's goroutine it would end the process.
	defer func() {
		r := recover()
		s, ok := r.(string)
		if !ok || !strings.Contains(s, "index out of range") {
			t.Errorf("recovered %v, want the fit's panic with its stack", r)
		}
	}()
	_ = unlocked(func() error {
		var a []int
		_ = a[len(a)]
		return nil
	})
	t.Error("unlocked did not re-raise the panic")
}
