package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// The projection to more cores (docs/benchmarks.md, "Instances' shares and
// a 16-core projection"). From runs of one query at several parallelisms
// N, each profiled by instance (InstanceReport), it predicts the wall
// time of the same query at parallelism C on C cores:
//
//   - S(N), the CPU of the parts that stay single (unsplit sources, final
//     merges, the view's writer, the coordinator), and P(N), the CPU of
//     the parallel fragments, are fitted as a + b·log2(N) over the
//     measured N ≥ 2 (least squares: b is what each doubling of the
//     parallelism adds, exchanges and merges growing with N) and evaluated
//     at N = C; so is G(N), the Go runtime's own CPU (the garbage
//     collector, spread over every core);
//   - the parallel part's wall is its busiest instances': P(C)/C · I, with
//     I the imbalance (Σ busiest instance / Σ mean instance over the
//     parallel fragments), extrapolated the same way in log2(N) and never
//     below the largest measured;
//   - Amdahl: W(C) = S(C) + P(C)/C · I + G(C)/C, the serial parts taken as
//     if they ran one after the other on one core while the parallel ones
//     wait (pessimistic: they are pipelined in fact);
//   - pipelined: W'(C) = max(the largest serial fragment, P(C)/C · I,
//     (S+P+G)(C)/C), the bound when every stage overlaps (optimistic).
//
// The speed-up is against the CPU of the run at parallelism 1 (one core
// doing everything, no exchange).

// ScalePoint is one profiled run's figures (InstanceReport.Point).
type ScalePoint struct {
	N             int
	Serial        time.Duration
	Parallel      time.Duration
	ParallelMax   time.Duration // Σ over parallel fragments of the busiest instance
	Runtime       time.Duration // Go runtime, GC
	LargestSerial time.Duration
}

// Imbalance is Σ busiest / Σ mean instance over the parallel fragments
// (1 without any).
func (p ScalePoint) Imbalance() float64 {
	if p.Parallel <= 0 || p.N <= 1 {
		return 1
	}
	return float64(p.ParallelMax) * float64(p.N) / float64(p.Parallel)
}

// Total is all of the run's CPU.
func (p ScalePoint) Total() time.Duration { return p.Serial + p.Parallel + p.Runtime }

// Projection is the predicted run at Cores cores and parallelism.
type Projection struct {
	Cores                     int
	Serial, Parallel, Runtime time.Duration // extrapolated to N = Cores
	LargestSerial             time.Duration
	Imbalance                 float64
	Amdahl                    time.Duration // S + P/C·I + G/C
	Pipelined                 time.Duration // max(largest serial, P/C·I, total/C)
	Base                      time.Duration // CPU at parallelism 1
}

// SpeedupAmdahl is Base over the Amdahl wall (0 without a base).
func (p Projection) SpeedupAmdahl() float64 { return ratio(p.Base, p.Amdahl) }

// SpeedupPipelined is Base over the pipelined wall.
func (p Projection) SpeedupPipelined() float64 { return ratio(p.Base, p.Pipelined) }

func ratio(a, b time.Duration) float64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Project predicts the wall time at cores cores from points (one per
// parallelism; those at N ≥ 2 are fitted, the one at N = 1, if any, is the
// base of the speed-up). It needs at least one point at N ≥ 2.
func Project(points []ScalePoint, cores int) (Projection, error) {
	var fit []ScalePoint
	pr := Projection{Cores: cores}
	for _, p := range points {
		if p.N <= 1 {
			pr.Base = p.Total()
			continue
		}
		fit = append(fit, p)
	}
	if len(fit) == 0 || cores < 1 {
		return Projection{}, fmt.Errorf("projection: needs a run at parallelism 2 or more and at least one core")
	}
	slices.SortFunc(fit, func(a, b ScalePoint) int { return a.N - b.N })
	x := math.Log2(float64(cores))
	at := func(f func(ScalePoint) float64) float64 {
		xs, ys := make([]float64, len(fit)), make([]float64, len(fit))
		for i, p := range fit {
			xs[i], ys[i] = math.Log2(float64(p.N)), f(p)
		}
		a, b := linearFit(xs, ys)
		return max(a+b*x, 0)
	}
	dur := func(f func(ScalePoint) time.Duration) time.Duration {
		return time.Duration(at(func(p ScalePoint) float64 { return float64(f(p)) }))
	}
	pr.Serial = dur(func(p ScalePoint) time.Duration { return p.Serial })
	pr.Parallel = dur(func(p ScalePoint) time.Duration { return p.Parallel })
	pr.Runtime = dur(func(p ScalePoint) time.Duration { return p.Runtime })
	pr.LargestSerial = min(dur(func(p ScalePoint) time.Duration { return p.LargestSerial }), pr.Serial)
	pr.Imbalance = at(ScalePoint.Imbalance)
	for _, p := range fit {
		pr.Imbalance = max(pr.Imbalance, p.Imbalance())
	}
	c := time.Duration(cores)
	par := time.Duration(float64(pr.Parallel/c) * pr.Imbalance)
	pr.Amdahl = pr.Serial + par + pr.Runtime/c
	pr.Pipelined = max(pr.LargestSerial, par, (pr.Serial+pr.Parallel+pr.Runtime)/c)
	return pr, nil
}

// linearFit is the least-squares line y = a + b·x through the points (a
// constant, b = 0, through one point or points at one x).
func linearFit(xs, ys []float64) (a, b float64) {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return sy / n, 0
	}
	b = (n*sxy - sx*sy) / den
	return (sy - b*sx) / n, b
}

func (p Projection) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "projection to %d cores (parallelism %d): serial %.3fs, parallel %.3fs (max/mean %.2f), runtime/GC %.3fs; wall Amdahl %.3fs, pipelined %.3fs",
		p.Cores, p.Cores, p.Serial.Seconds(), p.Parallel.Seconds(), p.Imbalance, p.Runtime.Seconds(), p.Amdahl.Seconds(), p.Pipelined.Seconds())
	if p.Base > 0 {
		fmt.Fprintf(&b, "; speed-up over one core %.1fx (Amdahl) to %.1fx (pipelined)", p.SpeedupAmdahl(), p.SpeedupPipelined())
	}
	return b.String()
}
