package main

import (
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/gbs-evidence/gbs/capi/internal/ctest"
	"github.com/gbs-evidence/gbs/gbs"
)

// The check codes of include/gbs.h are the Go checks' values, one for
// one, and their names are the IDs (GBS_CHECK_COPIED_CHAINS for
// "copied-chains"); the kinds likewise.
func TestCheckCodesMatchHeader(t *testing.T) {
	h, err := os.ReadFile("../include/gbs.h")
	if err != nil {
		t.Fatal(err)
	}
	defs := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^#define GBS_(CHECK|KIND)_(\w+) (\d+)`).FindAllStringSubmatch(string(h), -1) {
		v, _ := strconv.Atoi(m[3])
		defs[m[1]+"_"+m[2]] = v
	}
	checks := gbs.AllChecks()
	for _, c := range checks {
		name := "CHECK_" + strings.ToUpper(strings.ReplaceAll(c.String(), "-", "_"))
		if v, ok := defs[name]; !ok || v != int(c) {
			t.Errorf("check %q has code %d, the header's GBS_%s is %d (defined %v)", c, int(c), name, v, ok)
		}
		delete(defs, name)
	}
	for _, k := range []gbs.Kind{gbs.KindDraws, gbs.KindEstimate, gbs.KindInfo} {
		name := "KIND_" + strings.ToUpper(k.String())
		if defs[name] != int(k) {
			t.Errorf("kind %s is %d, the header's GBS_%s is %d", k, int(k), name, defs[name])
		}
		delete(defs, name)
	}
	for name := range defs {
		t.Errorf("GBS_%s has no Go counterpart", name)
	}
	// gbs_checks lists them, and gbs_check_get_info describes each.
	var n cInt64
	var msg *cChar
	if st := gbsgo_checks(nil, 0, &n, &msg); st != statusOK || int(n) != len(checks) {
		t.Fatalf("counting: status %d (%s), %d checks, want %d", st, message(msg), n, len(checks))
	}
	codes := make([]cInt32, n)
	if st := gbsgo_checks(&codes[0], n, &n, &msg); st != statusOK {
		t.Fatalf("status %d: %s", st, message(msg))
	}
	for i, code := range codes {
		info := cCheckInfo{}
		info.size = cSize(unsafe.Sizeof(info))
		if st := gbsgo_check_get_info(code, &info, &msg); st != statusOK {
			t.Fatalf("check %d: status %d: %s", code, st, message(msg))
		}
		want, _ := checks[i].Info()
		if int(code) != int(checks[i]) || goString(info.id) != want.ID || goString(info.title) != want.Title || int(info.kind) != int(want.Kind) {
			t.Errorf("check %d: %q %q kind %d, want %+v", code, goString(info.id), goString(info.title), info.kind, want)
		}
	}
	info := cCheckInfo{}
	info.size = cSize(unsafe.Sizeof(info))
	if st := gbsgo_check_get_info(0, &info, &msg); st != statusArgument {
		t.Errorf("code 0: status %d, want GBS_ERR_ARGUMENT", st)
	}
	message(msg)
	checkLive(t)
}

// A log density that is not the draws': the report's findings carry the
// consistency check's code, kind, statistic and message, and the numbers
// beyond gbs_diagnostics; freeing the result frees the report.
func TestReportFindings(t *testing.T) {
	const chains, draws, d = 4, 1000, 3
	x := normalDraws(chains*draws, d, 1)
	for i := range x {
		x[i] += 3 // draws of N(3, I), the log density of N(0, I)
	}
	opt := evidenceOptions()
	res := cResult{}
	res.size = cSize(unsafe.Sizeof(res))
	var msg *cChar
	if st := gbsgo_evidence(cLogDensityFn(ctest.NormalLogP()), nil, ptr(x), chains, draws, d, nil, opt, &res, nil, 0, &msg); st != statusOK {
		t.Fatalf("status %d: %s", st, message(msg))
	}
	if res.report == nil {
		t.Fatal("no report")
	}
	var n cInt64
	if st := gbsgo_report_n_findings(res.report, &n, &msg); st != statusOK || n < 1 {
		t.Fatalf("status %d (%s): %d findings", st, message(msg), n)
	}
	found := false
	for i := cInt64(0); i < n; i++ {
		f := cFinding{}
		f.size = cSize(unsafe.Sizeof(f))
		if st := gbsgo_report_finding(res.report, i, &f, &msg); st != statusOK {
			t.Fatalf("finding %d: status %d: %s", i, st, message(msg))
		}
		if gbs.Check(f.check) == gbs.CheckConsistency {
			found = true
			if gbs.Kind(f.kind) != gbs.KindEstimate || !(float64(f.value) > float64(f.limit)) || goString(f.message) == "" {
				t.Errorf("consistency finding: kind %d, value %g, limit %g, message %q", f.kind, f.value, f.limit, goString(f.message))
			}
		}
	}
	if !found {
		t.Errorf("no consistency finding among %d", n)
	}
	f := cFinding{}
	f.size = cSize(unsafe.Sizeof(f))
	if st := gbsgo_report_finding(res.report, n, &f, &msg); st != statusArgument {
		t.Errorf("finding %d of %d: status %d, want GBS_ERR_ARGUMENT", n, n, st)
	}
	message(msg)
	ext := cDiagnosticsExt{}
	ext.size = cSize(unsafe.Sizeof(ext))
	if st := gbsgo_report_diagnostics_ext(res.report, &ext, &msg); st != statusOK || math.IsNaN(float64(ext.sign_corr)) {
		t.Errorf("diagnostics_ext: status %d (%s), sign correlation %g", st, message(msg), ext.sign_corr)
	}
	smp := cSampling{}
	smp.size = cSize(unsafe.Sizeof(smp))
	if st := gbsgo_report_sampling(res.report, &smp, &msg); st != statusOK || smp.n_chains != 0 {
		t.Errorf("sampling of an evidence call: status %d (%s), %d chains", st, message(msg), smp.n_chains)
	}
	if st := gbsgo_report_draws(res.report, nil, nil, nil, &msg); st != statusArgument {
		t.Errorf("draws of an evidence call: status %d, want GBS_ERR_ARGUMENT", st)
	}
	message(msg)
	gbsgo_result_free(&res)
	if res.report != nil || res.warnings != nil {
		t.Error("gbs_result_free left pointers set")
	}
	checkLive(t)
}
