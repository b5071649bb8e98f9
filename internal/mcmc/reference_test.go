package mcmc

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"
)

// TestArviZReference holds the statistics to ArviZ 0.23.4 and emcee 3.1.6
// on fixed chains (testdata/arviz_reference.py writes them with the
// reference values). Both sides compute the same sums in other orders
// (FFT or lag by lag, pairs of chains per transform, Φ⁻¹ by erfinv or by
// ndtri): the agreement is to rounding, far inside 1e-8 relative.
func TestArviZReference(t *testing.T) {
	b, err := os.ReadFile("testdata/arviz_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Cases []struct {
			Name     string
			Chains   [][]float64
			RHatBulk float64 `json:"rhat_bulk"`
			RHatFold float64 `json:"rhat_fold"`
			ESSBulk  float64 `json:"ess_bulk"`
			ESSTail  float64 `json:"ess_tail"`
			ESSRaw   float64 `json:"ess_raw"`
			TauEmcee float64 `json:"tau_emcee"`
		}
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) < 10 {
		t.Fatalf("%d reference cases, want the 11 the script writes", len(ref.Cases))
	}
	const tol = 1e-8
	check := func(name, what string, got, want float64) {
		t.Helper()
		if !(math.Abs(got-want) <= tol*math.Abs(want)) {
			t.Errorf("%s: %s %.17g, ArviZ/emcee %.17g", name, what, got, want)
		}
	}
	for _, c := range ref.Cases {
		nc := len(c.Chains)
		x := slices.Concat(c.Chains...)
		st := Chains(x, nc, nil)
		check(c.Name, "bulk R-hat", st.RHatBulk, c.RHatBulk)
		check(c.Name, "folded R-hat", st.RHatFold, c.RHatFold)
		check(c.Name, "bulk ESS", st.ESSBulk, c.ESSBulk)
		check(c.Name, "tail ESS", st.ESSTail, c.ESSTail)
		// The table of scores is a lookup of the same values.
		if tb := Chains(x, nc, ScoreTable(nc, len(x)/nc)); tb.RHat() != st.RHat() || tb.ESSBulk != st.ESSBulk {
			t.Errorf("%s: with the score table R-hat %v ESS %v, without %v %v", c.Name, tb.RHat(), tb.ESSBulk, st.RHat(), st.ESSBulk)
		}
		if nc >= 2 {
			check(c.Name, "R-hat", RHat(c.Chains), math.Max(c.RHatBulk, c.RHatFold))
		}
		check(c.Name, "ESS of the chains as they are", ESS(c.Chains), c.ESSRaw)
		tau, _ := IntegratedTime(x, nc, TimeOptions{})
		check(c.Name, "emcee's tau", tau, c.TauEmcee)
	}
}
