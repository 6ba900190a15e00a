//go:build !linux

package main

import (
	"errors"
	"os/exec"
)

// errNoPinning: --scaling pins its one-core runs to a CPU, which is
// implemented for Linux only.
var errNoPinning = errors.New("--scaling pins runs to CPUs, which streamsqld does on Linux only")

func startPinned(*exec.Cmd, int) error { return errNoPinning }

func allowedCPUs() ([]int, error) { return nil, errNoPinning }
