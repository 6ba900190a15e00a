package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/bench"
)

// projectCores is the core count the --instances report projects to.
const projectCores = 16

// balanceLimit is how far above an even share an instance's work may be
// (issue 15: balanced within 20 %).
const balanceLimit = 0.2

// parseParallelisms reads --instances: parallelisms separated by commas
// ("1,2,4,8").
func parseParallelisms(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--instances takes parallelisms of at least 1 separated by commas (1,2,4,8), not %q", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// runInstances runs o once per parallelism of pars with the instances'
// report (bench.Options.Instances), prints each run's line and table, and
// then the projection to projectCores cores when a run at parallelism 2 or
// more was among them.
func runInstances(ctx context.Context, o bench.Options, pars []int, stdout io.Writer) error {
	var points []bench.ScalePoint
	var name string
	for _, n := range pars {
		o.Parallelism, o.ParallelismAuto, o.Instances = n, false, true
		r, err := bench.Run(ctx, o)
		if err != nil {
			return err
		}
		name = r.Query
		fmt.Fprintf(stdout, "%s parallelism=%d\n%s%-4s balance %s\n", r, n, r.Instances, name, r.Instances.Summary(balanceLimit))
		points = append(points, r.Instances.Point())
	}
	if !slices.ContainsFunc(points, func(p bench.ScalePoint) bool { return p.N >= 2 }) {
		return nil
	}
	pr, err := bench.Project(points, projectCores)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%-4s %s\n", name, pr)
	return nil
}
