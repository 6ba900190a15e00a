package main

import (
	"io"
	"testing"
)

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	if err != nil || cfg.listen != "127.0.0.1:5433" || cfg.dataDir != "./streamsql-data" {
		t.Errorf("defaults: %+v, %v", cfg, err)
	}
	cfg, err = parseFlags([]string{"--listen", ":6000", "--data-dir=/tmp/x"}, io.Discard)
	if err != nil || cfg.listen != ":6000" || cfg.dataDir != "/tmp/x" {
		t.Errorf("explicit: %+v, %v", cfg, err)
	}
	if _, err := parseFlags([]string{"extra"}, io.Discard); err == nil {
		t.Error("a stray argument was accepted")
	}
	if _, err := parseFlags([]string{"--nope"}, io.Discard); err == nil {
		t.Error("an unknown flag was accepted")
	}
}
