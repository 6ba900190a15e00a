package main

import (
	"fmt"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// startPinned starts cmd pinned to CPU cpu: a child inherits the CPU
// affinity of the thread that forks it, so the fork happens on a thread
// of this process pinned for the moment to cpu, whose affinity is then
// put back.
func startPinned(cmd *exec.Cmd, cpu int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var was unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		return fmt.Errorf("pinning the run to CPU %d: %w", cpu, err)
	}
	var one unix.CPUSet
	one.Set(cpu)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		return fmt.Errorf("pinning the run to CPU %d: %w", cpu, err)
	}
	err := cmd.Start()
	if rerr := unix.SchedSetaffinity(0, &was); rerr != nil && err == nil {
		// the command fails with it, as the rest of the runs would be
		// on one CPU
		return fmt.Errorf("restoring the CPU affinity after pinning a run: %w", rerr)
	}
	return err
}

// allowedCPUs lists the CPUs this process may run on.
func allowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, err
	}
	var cpus []int
	for c := 0; len(cpus) < set.Count(); c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
