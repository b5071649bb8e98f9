package gbs

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/gbs-evidence/gbs/internal/seed"
	"gonum.org/v1/gonum/floats"
)

// Label switching. A mixture of K exchangeable components has a
// posterior invariant under the K! relabelings of its components, and
// every chain stays in one of the K! copies. q fitted on such draws
// covers one copy, so the bridge returns the integral over that copy
// alone: ln Z low by ln K!, silently, and by a different amount for each
// K of a model comparison.
//
// symmetry.go finds such symmetries (permutations g of blocks of
// coordinates with log p(g·x) = log p(x) at a few dozen draws, while
// the draws sit where their relabeled copies do not) and corrects by
// symmetrizing: the proposal becomes q_G(x) = mean over g of q(g·x),
// sampled by drawing from q and applying a random g, and each posterior
// draw is relabeled by a random g (still a draw of p, which is
// invariant). The bridge is then exact whether the copies of the mode
// are far apart or overlap, where adding ln K! would be wrong.

// Blocks is a candidate symmetry of p: K ≥ 2 blocks of coordinates, all
// of one length L, that p may not tell apart. A relabeling moves the
// values of one block into another position by position:
// Blocks{{0}, {1}} exchanges coordinates 0 and 1; Blocks{{0, 2}, {1, 3}}
// exchanges (x0, x2) with (x1, x3), that is the first component's mean
// and scale of a two-component mixture laid out [μ1, μ2, σ1, σ2] with
// the second's. The group is every permutation of the K blocks.
type Blocks [][]int

const (
	// symmetryDraws is the number of draws at which log p(g·x) = log p(x)
	// is checked for each generator g of a candidate group (adjacent
	// block exchanges, which generate all K! relabelings).
	symmetryDraws = 32
	// symmetryTol is the relative tolerance of that check: |log p(g·x)
	// - log p(x)| ≤ symmetryTol (1 + |log p(x)|). Exchanging terms of a
	// float64 sum of n terms moves it by at most n 2⁻⁵³ Σ|t| (1e-10 for
	// a million like-signed terms); a float32 log density (JAX's
	// default) rounds each term at 2⁻²⁴ ≈ 6e-8, which sums of hundreds
	// of terms bring to 1e-7 relative. A density whose asymmetry stays
	// below the tolerance moves ln Z by no more than that.
	symmetryTol = 1e-6
	// symmetryOverlapMax: a relabeling g matters when the draws x and
	// their copies g·x overlap less than this, measured as the mean over
	// draws of min(1, q(g·x)/q(x)) with q the Gaussian of the draws'
	// means and variances. Draws of an invariant p give about 1 (fitting
	// noise alone: 0.9 and up at a few hundred draws); draws from one
	// copy of K separated ones give about 0; one copy of two overlapping
	// ones (the labeling μ1 < μ2 of an N(0,1)² posterior) gives 0.2.
	symmetryOverlapMax = 0.5
	// symmetryScreenDraws is the number of draws the overlap is measured
	// on.
	symmetryScreenDraws = 256
	// symmetryMaxCandidates bounds the candidates whose invariance is
	// tested (one log-density call each, then symmetryDraws per
	// generator for those that pass).
	symmetryMaxCandidates = 64
	// symmetryMaxTerms bounds the relabelings q_G averages over: larger
	// groups (K ≥ 5) use a random subset of this many (see symmetry).
	symmetryMaxTerms = 24
	// symmetryMaxAutoDim bounds the dimension up to which pairs of
	// coordinates and block layouts are searched without a candidate
	// given (d²/2 pairs screened on symmetryScreenDraws draws).
	symmetryMaxAutoDim = 256
)

// symmetry is the group of relabelings Evidence uses: the product of
// the groups, each permuting its blocks in every way.
type symmetry struct {
	d      int
	groups []symGroup
	// terms are the relabelings q_G averages over (all of G, or a
	// random subset of symmetryMaxTerms when G is larger); inv their
	// inverses. A permutation perm maps x to y with y[i] = x[perm[i]].
	terms, inv [][]int
	// order is |G| = Π K!.
	order float64
}

// symGroup is one verified group: its blocks, the overlap of the draws
// with their relabeled copies, and whether the user or an adapter gave
// it.
type symGroup struct {
	blocks  Blocks
	overlap float64
	given   bool
}

// check reports whether b is a valid group of a d-dimensional p.
func (b Blocks) check(d int) error {
	if len(b) < 2 {
		return fmt.Errorf("gbs: a symmetry group needs at least 2 blocks, got %d", len(b))
	}
	l := len(b[0])
	seen := map[int]bool{}
	for a, blk := range b {
		if len(blk) != l || l == 0 {
			return fmt.Errorf("gbs: the blocks of a symmetry group must have one non-zero length: block 0 has %d coordinates, block %d has %d", l, a, len(blk))
		}
		for _, k := range blk {
			if k < 0 || k >= d {
				return fmt.Errorf("gbs: coordinate %d of a symmetry group is out of range for d = %d", k, d)
			}
			if seen[k] {
				return fmt.Errorf("gbs: coordinate %d appears twice in a symmetry group", k)
			}
			seen[k] = true
		}
	}
	return nil
}

// perm is the coordinate permutation that puts block sigma[a]'s values
// into block a.
func (b Blocks) perm(d int, sigma []int) []int {
	p := make([]int, d)
	for i := range p {
		p[i] = i
	}
	for a, src := range sigma {
		for l, k := range b[a] {
			p[k] = b[src][l]
		}
	}
	return p
}

// generators are the exchanges of adjacent blocks, which generate every
// permutation of the blocks.
func (b Blocks) generators(d int) [][]int {
	var gs [][]int
	for a := 0; a+1 < len(b); a++ {
		sigma := make([]int, len(b))
		for i := range sigma {
			sigma[i] = i
		}
		sigma[a], sigma[a+1] = a+1, a
		gs = append(gs, b.perm(d, sigma))
	}
	return gs
}

func (b Blocks) coords() []int {
	var c []int
	for _, blk := range b {
		c = append(c, blk...)
	}
	return c
}

// permuteRows writes y[i] = x[perm[i]] for every row of x.
func permuteRows(y, x []float64, perm []int) {
	d := len(perm)
	for r := 0; r+d <= len(x); r += d {
		for i, k := range perm {
			y[r+i] = x[r+k]
		}
	}
}

// symProposal is q_G(x) = mean over the relabelings g of q(g⁻¹·x), the
// density of g·y for y from q and g uniform over them: normalized, as
// permutations have unit Jacobian.
type symProposal struct {
	q   Proposal
	sym *symmetry
}

func (p *symProposal) Dim() int { return p.q.Dim() }

func (p *symProposal) LogProb(dst, x []float64) {
	buf := make([]float64, len(x))
	lq := make([]float64, len(dst))
	for t, inv := range p.sym.inv {
		permuteRows(buf, x, inv)
		p.q.LogProb(lq, buf)
		for i, v := range lq {
			if t == 0 {
				dst[i] = v
			} else {
				dst[i] = logAddExp(dst[i], v)
			}
		}
	}
	ln := math.Log(float64(len(p.sym.inv)))
	for i := range dst {
		dst[i] -= ln
	}
}

func (p *symProposal) Sample(dst, logq []float64, rng *rand.Rand) {
	p.q.Sample(dst, logq, rng)
	d := p.q.Dim()
	row := make([]float64, d)
	for r := 0; r < len(logq); r++ {
		g := p.sym.terms[rng.IntN(len(p.sym.terms))]
		permuteRows(row, dst[r*d:(r+1)*d], g)
		copy(dst[r*d:(r+1)*d], row)
	}
	p.LogProb(logq, dst)
}

// partial reports whether q_G averages over a subset of the relabelings.
func (s *symmetry) partial() bool {
	return s != nil && float64(len(s.terms)) < s.order
}

// wrap returns q symmetrized over s (q itself when s is nil).
func (s *symmetry) wrap(q Proposal) Proposal {
	if s == nil {
		return q
	}
	return &symProposal{q: q, sym: s}
}

// relabel returns a copy of the row-major draws x, each relabeled by a
// relabeling drawn uniformly from all of G.
func (s *symmetry) relabel(x []float64, rng *rand.Rand) []float64 {
	d := s.d
	y := slices.Clone(x)
	for r := 0; r+d <= len(x); r += d {
		for _, g := range s.groups {
			sigma := rng.Perm(len(g.blocks))
			for a, src := range sigma {
				for l, k := range g.blocks[a] {
					y[r+k] = x[r+g.blocks[src][l]]
				}
			}
		}
	}
	return y
}

// relabelHalves returns h with both halves' draws relabeled at random,
// keeping the draws as they came for fitting q (one labeling fits best).
func (s *symmetry) relabelHalves(h halves, rng *rand.Rand) halves {
	if s == nil {
		return h
	}
	h.fitRaw, h.useRaw = h.fit, h.use
	h.fit, h.use = s.relabel(h.fit, rng), s.relabel(h.use, rng)
	return h
}

// widenRange makes the per-coordinate range [lo, hi] of the draws that
// of their relabeled copies too: the union over each coordinate's orbit.
func (s *symmetry) widenRange(lo, hi []float64) {
	if s == nil {
		return
	}
	for _, g := range s.groups {
		for l := range g.blocks[0] {
			a, b := math.Inf(1), math.Inf(-1)
			for _, blk := range g.blocks {
				a, b = math.Min(a, lo[blk[l]]), math.Max(b, hi[blk[l]])
			}
			for _, blk := range g.blocks {
				lo[blk[l]], hi[blk[l]] = a, b
			}
		}
	}
}

// newSymmetry builds the relabelings of the product of groups; rng picks
// the subset when G has more than symmetryMaxTerms elements.
func newSymmetry(d int, groups []symGroup, rng *rand.Rand) *symmetry {
	s := &symmetry{d: d, groups: groups, order: 1}
	for _, g := range groups {
		for k := 2; k <= len(g.blocks); k++ {
			s.order *= float64(k)
		}
	}
	compose := func(sigmas [][]int) []int {
		p := make([]int, d)
		for i := range p {
			p[i] = i
		}
		for j, g := range groups {
			for a, src := range sigmas[j] {
				for l, k := range g.blocks[a] {
					p[k] = g.blocks[src][l]
				}
			}
		}
		return p
	}
	if s.order <= symmetryMaxTerms {
		all := [][][]int{nil}
		for _, g := range groups {
			var next [][][]int
			for _, pre := range all {
				for _, sigma := range permutations(len(g.blocks)) {
					next = append(next, append(slices.Clone(pre), sigma))
				}
			}
			all = next
		}
		for _, sigmas := range all {
			s.terms = append(s.terms, compose(sigmas))
		}
	} else {
		seen := map[string]bool{}
		for tries := 0; len(s.terms) < symmetryMaxTerms && tries < 100*symmetryMaxTerms; tries++ {
			sigmas := make([][]int, len(groups))
			for j, g := range groups {
				sigmas[j] = rng.Perm(len(g.blocks))
			}
			p := compose(sigmas)
			key := fmt.Sprint(p)
			if seen[key] {
				continue
			}
			seen[key] = true
			s.terms = append(s.terms, p)
		}
	}
	for _, p := range s.terms {
		inv := make([]int, d)
		for i, k := range p {
			inv[k] = i
		}
		s.inv = append(s.inv, inv)
	}
	return s
}

// permutations lists the permutations of 0..k-1 in lexicographic order.
func permutations(k int) [][]int {
	if k == 1 {
		return [][]int{{0}}
	}
	var out [][]int
	for _, sub := range permutations(k - 1) {
		for pos := 0; pos < k; pos++ {
			p := make([]int, 0, k)
			p = append(p, sub[:pos]...)
			p = append(p, k-1)
			p = append(p, sub[pos:]...)
			out = append(out, p)
		}
	}
	slices.SortFunc(out, slices.Compare)
	return out
}

// symCandidate is a group to test: its blocks, where it came from, and
// its overlap on the screen.
type symCandidate struct {
	blocks  Blocks
	given   bool
	overlap float64
	// prio orders the candidates tested first when there are more
	// than symmetryMaxCandidates: blocks whose draws spread alike
	// (label switching moves locations, not spreads).
	prio float64
}

// screen holds the draws the overlap is measured on, with the
// coordinates' means and 1/(2 variance).
type screen struct {
	x       []float64
	n, d    int
	mean, w []float64
}

func newScreen(x []float64, d int) *screen {
	n := len(x) / d
	stride := max(1, n/symmetryScreenDraws)
	sc := &screen{d: d, mean: make([]float64, d), w: make([]float64, d)}
	for r := 0; r < n && sc.n < symmetryScreenDraws; r += stride {
		sc.x = append(sc.x, x[r*d:(r+1)*d]...)
		sc.n++
	}
	// Means and variances over all draws, which the screen's Gaussian
	// stands for, accumulated row by row (the draws are row-major).
	for r := range n {
		floats.Add(sc.mean, x[r*d:(r+1)*d])
	}
	for k := range sc.mean {
		sc.mean[k] /= float64(n)
	}
	for r := range n {
		for k, v := range x[r*d : (r+1)*d] {
			dv := v - sc.mean[k]
			sc.w[k] += dv * dv
		}
	}
	for k, m := range sc.mean {
		v := sc.w[k] / float64(max(n-1, 1))
		sc.w[k] = 1 / (2 * (v + 1e-300 + 1e-24*m*m))
	}
	return sc
}

// overlap is the mean over the screen's draws of min(1, q(g·x)/q(x))
// for g the exchange of blocks a and b. Once the mean is sure to reach
// stop it returns early, with a value of at least stop: only overlaps
// below stop are used.
func (sc *screen) overlap(bl Blocks, a, b int, stop float64) float64 {
	sum, enough := 0.0, stop*float64(sc.n)
	for r := 0; r < sc.n && sum < enough; r++ {
		row := sc.x[r*sc.d : (r+1)*sc.d]
		delta := 0.0
		for l, i := range bl[a] {
			j := bl[b][l]
			xi, xj := row[i], row[j]
			mi, mj := sc.mean[i], sc.mean[j]
			delta += sc.w[i]*((xi-mi)*(xi-mi)-(xj-mi)*(xj-mi)) + sc.w[j]*((xj-mj)*(xj-mj)-(xi-mj)*(xi-mj))
		}
		if delta < 0 {
			sum += math.Exp(delta)
		} else {
			sum++
		}
	}
	return sum / float64(sc.n)
}

// groupOverlap is the least overlap over the group's adjacent exchanges
// (exact below stop; see overlap).
func (sc *screen) groupOverlap(bl Blocks, stop float64) float64 {
	o := 1.0
	for a := 0; a+1 < len(bl); a++ {
		o = math.Min(o, sc.overlap(bl, a, a+1, stop))
	}
	return o
}

// spreadGap is the summed |ln| of the variance ratios of blocks 0 and 1.
func (sc *screen) spreadGap(bl Blocks) float64 {
	g := 0.0
	for l, i := range bl[0] {
		g += math.Abs(math.Log(sc.w[i] / sc.w[bl[1][l]]))
	}
	return g
}

// autoCandidates are the pairs of coordinates and the block layouts
// [v_1(K) … v_L(K)] (each variable's K entries together) and
// [c_1(L) … c_K(L)] (each component's L entries together), starting at
// the first coordinate or ending at the last.
func autoCandidates(d int) []Blocks {
	var out []Blocks
	for i := 0; i < d; i++ {
		for j := i + 1; j < d; j++ {
			out = append(out, Blocks{{i}, {j}})
		}
	}
	seen := map[string]bool{}
	for k := 2; 2*k <= d; k++ {
		for l := 2; k*l <= d; l++ {
			for _, off := range []int{0, d - k*l} {
				for _, byVar := range []bool{true, false} {
					bl := make(Blocks, k)
					for a := range k {
						for v := range l {
							if byVar {
								bl[a] = append(bl[a], off+v*k+a)
							} else {
								bl[a] = append(bl[a], off+a*l+v)
							}
						}
					}
					key := fmt.Sprint(bl)
					if !seen[key] {
						seen[key] = true
						out = append(out, bl)
					}
				}
			}
		}
	}
	return out
}

// detectSymmetry finds the symmetries Evidence corrects for (stored in
// e.sym, with an information finding), at a bounded cost in log-density
// calls: one per screened candidate, symmetryDraws per generator of those
// that pass.
func (e *estimation) detectSymmetry() error {
	if e.cfg.Symmetry == Off || e.cfg.Method == Warp3 {
		return nil
	}
	d := e.s.Dim
	var cands []symCandidate
	for _, g := range e.cfg.SymmetryGroups {
		cands = append(cands, symCandidate{blocks: g, given: true})
	}
	if d >= 2 && d <= symmetryMaxAutoDim {
		for _, b := range autoCandidates(d) {
			cands = append(cands, symCandidate{blocks: b})
		}
	}
	if len(cands) == 0 {
		return nil
	}
	x, lpAll := allDraws(e.s)
	if cands = e.screenCandidates(cands, x); len(cands) == 0 {
		return nil
	}
	// The draws the invariance is checked at, on a stream of their own.
	rng := seed.New(e.cfg.Seed, streamSymmetry)
	verified, err := e.verifyCandidates(cands, x, lpAll, rng)
	if err != nil {
		return err
	}
	groups := acceptGroups(cands, verified, d)
	if len(groups) == 0 {
		return nil
	}
	e.sym = newSymmetry(d, groups, rng)
	e.found(e.symmetryNote())
	return nil
}

// screenCandidates keeps the candidates whose relabeled draws fall where
// the draws x are not (all of them with Symmetry On), the given ones
// first and then those whose blocks spread alike, at most
// symmetryMaxCandidates.
func (e *estimation) screenCandidates(cands []symCandidate, x []float64) []symCandidate {
	sc := newScreen(x, e.s.Dim)
	stop := symmetryOverlapMax
	if e.cfg.Symmetry == On {
		stop = math.Inf(1)
	}
	kept := cands[:0]
	for _, c := range cands {
		c.overlap = sc.groupOverlap(c.blocks, stop)
		c.prio = sc.spreadGap(c.blocks)
		if e.cfg.Symmetry == On || c.overlap < stop {
			kept = append(kept, c)
		}
	}
	slices.SortStableFunc(kept, func(a, b symCandidate) int {
		if a.given != b.given {
			if a.given {
				return -1
			}
			return 1
		}
		return cmpFloat(a.prio, b.prio)
	})
	if len(kept) > symmetryMaxCandidates {
		e.logf("symmetry: %d candidate relabelings, testing the first %d", len(kept), symmetryMaxCandidates)
		kept = kept[:symmetryMaxCandidates]
	}
	return kept
}

// verifyCandidates reports for each candidate whether log p is invariant
// under its relabelings: its first generator at one draw (a log-density
// call per candidate), then, for those that pass, every generator at
// symmetryDraws draws picked by rng. lpAll is log p at the draws x when
// known (nil: evaluated here, at the picked draws only).
func (e *estimation) verifyCandidates(cands []symCandidate, x, lpAll []float64, rng *rand.Rand) ([]bool, error) {
	d := e.s.Dim
	n := len(x) / d
	k := min(symmetryDraws, n)
	pick := rng.Perm(n)[:k]
	xs := make([]float64, k*d)
	lp := make([]float64, k)
	for i, r := range pick {
		copy(xs[i*d:(i+1)*d], x[r*d:(r+1)*d])
		if lpAll != nil {
			lp[i] = lpAll[r]
		}
	}
	// log p at the picked draws [from, hi), where not given.
	evalLogP := func(from, hi int) error {
		if lpAll != nil || from >= hi {
			return nil
		}
		if err := e.ev.eval(lp[from:hi], xs[from*d:hi*d]); err != nil {
			return fmt.Errorf("%w (checking the symmetries of log p)", err)
		}
		return nil
	}
	if err := evalLogP(0, 1); err != nil {
		return nil, err
	}
	first := make([][]int, len(cands))
	for i, c := range cands {
		first[i] = c.blocks.generators(d)[0]
	}
	ok, err := e.invariantAt(xs[:d], lp[:1], first)
	if err != nil {
		return nil, err
	}
	var gens [][]int
	var owner []int
	for i, c := range cands {
		if ok[i] {
			for _, g := range c.blocks.generators(d) {
				gens = append(gens, g)
				owner = append(owner, i)
			}
		}
	}
	if len(gens) == 0 {
		return ok, nil
	}
	if err := evalLogP(1, k); err != nil {
		return nil, err
	}
	okAll, err := e.invariantAt(xs, lp, gens)
	if err != nil {
		return nil, err
	}
	for j, i := range owner {
		ok[i] = ok[i] && okAll[j]
	}
	return ok, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// invariantAt reports, for each permutation, whether log p at the
// permuted draws xs equals lp (log p at xs) within symmetryTol, at every
// draw.
func (e *estimation) invariantAt(xs, lp []float64, perms [][]int) ([]bool, error) {
	d := e.s.Dim
	k := len(lp)
	y := make([]float64, len(perms)*k*d)
	for j, p := range perms {
		permuteRows(y[j*k*d:(j+1)*k*d], xs, p)
	}
	got := make([]float64, len(perms)*k)
	if err := e.ev.eval(got, y); err != nil {
		return nil, fmt.Errorf("%w (checking the symmetries of log p)", err)
	}
	ok := make([]bool, len(perms))
	for j := range perms {
		ok[j] = true
		for i := range k {
			a, b := lp[i], got[j*k+i]
			if a == b {
				continue
			}
			if !(math.Abs(a-b) <= symmetryTol*(1+math.Abs(a))) {
				ok[j] = false
				break
			}
		}
	}
	return ok, nil
}

// acceptGroups keeps verified candidates with disjoint coordinates: the
// pairs of coordinates joined into groups where they share one (the
// exchanges of a connected set of coordinates generate all its
// permutations), then the given groups finest first (so that two
// exchangeable vectors give the product of their groups), then block
// layouts with the most blocks first.
func acceptGroups(cands []symCandidate, verified []bool, d int) []symGroup {
	used := make([]bool, d)
	var groups []symGroup
	// Pairs: union-find over coordinates.
	parent := make([]int, d)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	minOverlap := map[int]float64{}
	var pairs []int
	for i, c := range cands {
		if !verified[i] || c.given || len(c.blocks[0]) != 1 || len(c.blocks) != 2 {
			continue
		}
		pairs = append(pairs, i)
		parent[find(c.blocks[0][0])] = find(c.blocks[1][0])
	}
	comps := map[int][]int{}
	for _, i := range pairs {
		for _, blk := range cands[i].blocks {
			r := find(blk[0])
			if !slices.Contains(comps[r], blk[0]) {
				comps[r] = append(comps[r], blk[0])
			}
		}
	}
	for _, i := range pairs {
		r := find(cands[i].blocks[0][0])
		o, ok := minOverlap[r]
		if !ok || cands[i].overlap < o {
			minOverlap[r] = cands[i].overlap
		}
	}
	var roots []int
	for r := range comps {
		roots = append(roots, r)
	}
	slices.Sort(roots)
	for _, r := range roots {
		cs := comps[r]
		slices.Sort(cs)
		bl := make(Blocks, len(cs))
		for a, k := range cs {
			bl[a] = []int{k}
			used[k] = true
		}
		groups = append(groups, symGroup{blocks: bl, overlap: minOverlap[r]})
	}
	var rest []int
	for i, c := range cands {
		if verified[i] && (c.given || len(c.blocks[0]) > 1) {
			rest = append(rest, i)
		}
	}
	slices.SortStableFunc(rest, func(a, b int) int {
		ca, cb := cands[a], cands[b]
		if ca.given != cb.given {
			if ca.given {
				return -1
			}
			return 1
		}
		if ca.given {
			return len(ca.blocks[0]) - len(cb.blocks[0])
		}
		return len(cb.blocks) - len(ca.blocks)
	})
	for _, i := range rest {
		c := cands[i]
		free := true
		for _, k := range c.blocks.coords() {
			free = free && !used[k]
		}
		if !free {
			continue
		}
		for _, k := range c.blocks.coords() {
			used[k] = true
		}
		groups = append(groups, symGroup{blocks: c.blocks, overlap: c.overlap, given: c.given})
	}
	return groups
}

// describe names a group's blocks: "mu[0] ↔ mu[1]" or "(mu[0], sigma[0])
// ↔ (mu[1], sigma[1]) ↔ …".
func (e *estimation) describeGroup(b Blocks) string {
	parts := make([]string, 0, len(b))
	for a, blk := range b {
		if a == 4 && len(b) > 5 {
			parts = append(parts, "…", e.describeBlock(b[len(b)-1]))
			break
		}
		parts = append(parts, e.describeBlock(blk))
	}
	return strings.Join(parts, " ↔ ")
}

func (e *estimation) describeBlock(blk []int) string {
	if len(blk) == 1 {
		return e.name(blk[0])
	}
	names := make([]string, len(blk))
	for l, k := range blk {
		names[l] = e.name(k)
	}
	return "(" + strings.Join(names, ", ") + ")"
}

// symmetryNote is the information finding saying which symmetry was
// found and how ln Z used it.
func (e *estimation) symmetryNote() Finding {
	s := e.sym
	var gs []string
	minOverlap := 1.0
	for _, g := range s.groups {
		src := ""
		if g.given {
			src = ", a group given"
		}
		gs = append(gs, fmt.Sprintf("%s (%d blocks%s)", e.describeGroup(g.blocks), len(g.blocks), src))
		minOverlap = math.Min(minOverlap, g.overlap)
	}
	how := fmt.Sprintf("ln Z uses the proposal averaged over all %.0f relabelings, q_G(x) = mean of q(g·x), against the draws each relabeled at random", s.order)
	if float64(len(s.terms)) < s.order {
		how = fmt.Sprintf("ln Z uses the proposal averaged over a random %d of the %.4g relabelings, against the draws each relabeled at random "+
			"from all of them; the error bar counts the draws that fall where that average puts little mass", len(s.terms), s.order)
	}
	if minOverlap >= symmetryOverlapMax {
		return finding(CheckSymmetry, KindInfo, WhereNone, minOverlap, symmetryOverlapMax,
			"log p is unchanged by relabeling %s (checked at %d draws to a relative %.0e); the draws and their relabeled copies already "+
				"overlap %.2f, but symmetrizing was asked for (Settings.Symmetry = On): %s",
			strings.Join(gs, "; "), symmetryDraws, symmetryTol, minOverlap, how)
	}
	return finding(CheckSymmetry, KindInfo, WhereNone, minOverlap, symmetryOverlapMax,
		"log p is unchanged by relabeling %s (checked at %d draws to a relative %.0e), and the draws and their relabeled copies overlap %.2f "+
			"(below %.2f: the chains hold one labeling, or part of one, of copies of the posterior that differ only in labels): %s; "+
			"without this, ln Z would be low by up to ln %.4g = %.3g",
		strings.Join(gs, "; "), symmetryDraws, symmetryTol, minOverlap, symmetryOverlapMax, how, s.order, math.Log(s.order))
}
