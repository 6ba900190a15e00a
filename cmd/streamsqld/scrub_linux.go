//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// scrubEnv overwrites the value of the variable name in the environment
// block the process started with, which Linux keeps showing in
// /proc/<pid>/environ whatever os.Unsetenv does. Call it after the value
// has been copied and the variable unset: the bytes are then referenced by
// nobody (the Go runtime's and libc's copies of the environment point into
// this block, but no longer at this entry). The block's place is
// /proc/self/stat's env_start; the write goes through /proc/self/mem.
func scrubEnv(name string) error {
	env, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		return err
	}
	key := []byte(name + "=")
	at := -1
	for off := 0; off < len(env); {
		end := bytes.IndexByte(env[off:], 0)
		if end < 0 {
			end = len(env) - off
		}
		if bytes.HasPrefix(env[off:off+end], key) {
			at = off + len(key)
			env = env[:off+end]
			break
		}
		off += end + 1
	}
	if at < 0 || at >= len(env) {
		return nil // not there, or empty
	}
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return err
	}
	// Fields after the command name (which may hold spaces) start at 3;
	// env_start is field 50.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return fmt.Errorf("unexpected /proc/self/stat")
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 48 {
		return fmt.Errorf("/proc/self/stat has no env_start")
	}
	start, err := strconv.ParseUint(fields[47], 10, 64)
	if err != nil {
		return err
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer mem.Close()
	blank := bytes.Repeat([]byte{'*'}, len(env)-at)
	if _, err := mem.WriteAt(blank, int64(start)+int64(at)); err != nil {
		return err
	}
	return nil
}
