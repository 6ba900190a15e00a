package bench

import (
	"math"
	"testing"
	"time"
)

// TestProjectArithmetic checks the 16-core projection against figures
// worked out by hand: serial CPU constant at 1 s, parallel CPU 8 s plus
// 1 s per doubling of the parallelism, the runtime's 0.5 s, instances 10 %
// above an even share at 2 and 4, 20 % at 8.
func TestProjectArithmetic(t *testing.T) {
	s := time.Second
	pt := func(n int, par time.Duration, imb float64) ScalePoint {
		return ScalePoint{N: n, Serial: s, Parallel: par, ParallelMax: time.Duration(float64(par) / float64(n) * imb),
			Runtime: s / 2, LargestSerial: s * 3 / 4}
	}
	points := []ScalePoint{
		{N: 1, Serial: 9 * s, Runtime: s / 2}, // the base: 9.5 s
		pt(2, 9*s, 1.1), pt(4, 10*s, 1.1), pt(8, 11*s, 1.2),
	}
	pr, err := Project(points, 16)
	if err != nil {
		t.Fatal(err)
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	near("serial", pr.Serial.Seconds(), 1)
	near("parallel", pr.Parallel.Seconds(), 12) // 8 + log2(16)
	near("runtime", pr.Runtime.Seconds(), 0.5)
	// the imbalance fitted over log2 N = 1, 2, 3 (1.1, 1.1, 1.2): slope
	// b = 0.1/2 = 0.05, a = 1.1333 - 2b = 1.0333; at log2 16 = 4: 1.2333
	near("imbalance", pr.Imbalance, 1.0333333333333334+0.05*4)
	par := 12.0 / 16 * pr.Imbalance
	near("amdahl", pr.Amdahl.Seconds(), 1+par+0.5/16)
	near("pipelined", pr.Pipelined.Seconds(), math.Max(0.75, math.Max(par, 13.5/16)))
	near("speed-up", pr.SpeedupAmdahl(), 9.5/(1+par+0.5/16))
	if pr.Base != 9500*time.Millisecond {
		t.Errorf("base = %v, want 9.5s", pr.Base)
	}
}

// TestProjectImbalanceFloor: the projected imbalance is never below the
// largest measured, even when the fit falls.
func TestProjectImbalanceFloor(t *testing.T) {
	s := time.Second
	points := []ScalePoint{
		{N: 2, Serial: s, Parallel: 4 * s, ParallelMax: 3 * s}, // 1.5
		{N: 8, Serial: s, Parallel: 4 * s, ParallelMax: s / 2}, // 1.0
	}
	pr, err := Project(points, 16)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Imbalance != 1.5 {
		t.Errorf("imbalance = %v, want the measured 1.5", pr.Imbalance)
	}
	if pr.Base != 0 || pr.SpeedupAmdahl() != 0 {
		t.Errorf("no run at parallelism 1, yet base %v speed-up %v", pr.Base, pr.SpeedupAmdahl())
	}
	if _, err := Project(points[:0], 16); err == nil {
		t.Error("a projection without a parallel run")
	}
}

func TestLinearFit(t *testing.T) {
	a, b := linearFit([]float64{1, 2, 3}, []float64{3, 5, 7})
	if a != 1 || b != 2 {
		t.Errorf("fit = %v + %v x, want 1 + 2x", a, b)
	}
	if a, b := linearFit([]float64{2}, []float64{5}); a != 5 || b != 0 {
		t.Errorf("fit of one point = %v + %v x, want 5", a, b)
	}
}
