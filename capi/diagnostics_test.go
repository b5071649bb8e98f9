package main

import (
	"math"
	"reflect"
	"testing"

	"github.com/gbs-evidence/gbs/gbs"
)

// TestDiagnosticsToCWritesEveryField holds diagnosticsToC and
// diagnosticsExtToC, the hand-written mappings from gbs.Diagnostics (and
// the result's anneal counts) to the C structs gbs_diagnostics (frozen at
// ABI version 3) and gbs_diagnostics_ext, to the structs as they are:
// every Go field is filled with a value of its own, every C field must
// then hold a distinct, non-zero value, and every Go field must reach
// some C field. A field added to either side without its line fails here.
// (The ctypes view of the C structs is checked against include/gbs.h by
// tests/python/test_abi_layout.py.)
func TestDiagnosticsToCWritesEveryField(t *testing.T) {
	r := &gbs.Result{AnnealSteps: 4001, AnnealCalls: 4002}
	want := map[float64]string{4001: "AnnealSteps", 4002: "AnnealCalls"}
	v := reflect.ValueOf(&r.Diagnostics).Elem()
	for i := 0; i < v.NumField(); i++ {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch {
		case f.Kind() == reflect.Float64:
			x := 1000 + float64(i) + 0.5
			f.SetFloat(x)
			want[x] = name
		case f.Kind() == reflect.Int:
			x := 2000 + i
			f.SetInt(int64(x))
			want[float64(x)] = name
		case f.Type() == reflect.TypeOf([]int(nil)):
			// A list of chains: C gets its length and its first element.
			n, first := 3+i, 3000+i
			s := make([]int, n)
			s[0] = first
			f.Set(reflect.ValueOf(s))
			want[float64(n)] = name + " (length)"
			want[float64(first)] = name + " (first)"
		case f.Type() == reflect.TypeOf([][]int(nil)):
			// Groups of chains: C gets their number and the first chain.
			n, first := 3+i, 3000+i
			s := make([][]int, n)
			s[0] = []int{first}
			f.Set(reflect.ValueOf(s))
			want[float64(n)] = name + " (length)"
			want[float64(first)] = name + " (first)"
		case f.Type() == reflect.TypeOf([]gbs.MissedMode(nil)):
			// Modes: C gets their number (the locations are in the
			// finding's message).
			n := 3 + i
			f.Set(reflect.ValueOf(make([]gbs.MissedMode, n)))
			want[float64(n)] = name + " (length)"
		default:
			t.Fatalf("gbs.Diagnostics.%s is a %s: teach diagnosticsToC and this test about it", name, f.Type())
		}
	}
	seen := map[string]string{}
	for _, c := range []reflect.Value{reflect.ValueOf(diagnosticsToC(&r.Diagnostics)), reflect.ValueOf(diagnosticsExtToC(r))} {
		for i := 0; i < c.NumField(); i++ {
			name := c.Type().Name() + "." + c.Type().Field(i).Name
			if c.Type().Field(i).Name == "size" {
				continue
			}
			var x float64
			switch f := c.Field(i); f.Kind() {
			case reflect.Float64:
				x = f.Float()
			case reflect.Int64, reflect.Int32:
				x = float64(f.Int())
			default:
				t.Fatalf("%s is a %s", name, f.Kind())
			}
			from, ok := want[x]
			switch {
			case x == 0 || math.IsNaN(x):
				t.Errorf("%s is not written", name)
			case !ok:
				t.Errorf("%s = %v comes from no field of gbs.Diagnostics", name, x)
			case seen[from] != "":
				t.Errorf("%s and %s both come from %s", seen[from], name, from)
			default:
				seen[from] = name
			}
		}
	}
	for _, from := range want {
		if seen[from] == "" {
			t.Errorf("gbs.Diagnostics.%s reaches no field of gbs_diagnostics or gbs_diagnostics_ext", from)
		}
	}
}

// TestDiagnosticsSummaryIsGos: gbs_diagnostics_summary prints Go's
// Diagnostics.String() of the struct it is given (the round trip through
// diagnosticsFromC keeps every field the struct has), sized in two calls.
func TestDiagnosticsSummaryIsGos(t *testing.T) {
	d := gbs.Diagnostics{RHatMax: 1.02, RHatWhere: 3, ESSBulkMin: 812, ESSTailMin: 640, BurnInZ: 1.3,
		ParetoKQ: 0.21, ParetoKP: 0.1, CrossFitZ: -0.4, TiltZ: 1.1, SpotChecked: 32, SpotMaxDiff: 1e-9,
		OutlierChains: []int{2, 5}, StuckChains: nil, ParetoKThreshold: 0.7, ISZ: 0.3, HMZ: 0.2}
	c := diagnosticsToC(&d)
	back := diagnosticsFromC(&c)
	if diagnosticsToC(&back) != c {
		t.Fatalf("diagnosticsToC(diagnosticsFromC(c)) differs from c")
	}
	var n cInt64
	var msg *cChar
	if st := gbsgo_diagnostics_summary(&c, nil, 0, &n, &msg); st != statusOK {
		t.Fatalf("sizing: status %d: %s", st, message(msg))
	}
	want := d.String()
	if int(n) != len(want) || want == "" {
		t.Fatalf("length %d, Go's summary %q", n, want)
	}
	buf := make([]cChar, n+1)
	if st := gbsgo_diagnostics_summary(&c, &buf[0], n, &n, &msg); st != statusTooSmall {
		t.Fatalf("no room for the NUL: status %d, want GBS_ERR_BUFFER_TOO_SMALL", st)
	}
	message(msg)
	msg = nil
	if st := gbsgo_diagnostics_summary(&c, &buf[0], n+1, &n, &msg); st != statusOK {
		t.Fatalf("status %d: %s", st, message(msg))
	}
	if got := goString(&buf[0]); got != want {
		t.Errorf("summary %q, Go's %q", got, want)
	}
}
