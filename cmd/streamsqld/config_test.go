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
	if cfg, err := parseFlags([]string{"--subscribe-buffer-rows", "10"}, io.Discard); err != nil || cfg.subscribeBufferRows != 10 {
		t.Errorf("--subscribe-buffer-rows: %+v, %v", cfg, err)
	}
	if _, err := parseFlags([]string{"--subscribe-buffer-rows", "0"}, io.Discard); err == nil {
		t.Error("--subscribe-buffer-rows 0 was accepted")
	}
	if cfg, err := parseFlags([]string{"--clock", "manual"}, io.Discard); err != nil || cfg.clock != "manual" {
		t.Errorf("--clock manual: %+v, %v", cfg, err)
	}
	if cfg, err := parseFlags(nil, io.Discard); err != nil || cfg.clock != "wall" {
		t.Errorf("--clock default: %+v, %v", cfg, err)
	}
	if _, err := parseFlags([]string{"--clock", "sundial"}, io.Discard); err == nil {
		t.Error("--clock sundial was accepted")
	}
	if _, err := parseFlags([]string{"extra"}, io.Discard); err == nil {
		t.Error("a stray argument was accepted")
	}
	if _, err := parseFlags([]string{"--nope"}, io.Discard); err == nil {
		t.Error("an unknown flag was accepted")
	}
	if _, err := parseFlags([]string{"--tls-cert", "c.pem"}, io.Discard); err == nil {
		t.Error("--tls-cert without --tls-key was accepted")
	}
	t.Setenv("STREAMSQLD_PASSWORD", "pw")
	cfg, err = parseFlags(nil, io.Discard)
	if err != nil || cfg.password != "pw" {
		t.Fatalf("password from the environment: %+v, %v", cfg, err)
	}
	opts, err := cfg.wireOptions(nil)
	if err != nil || opts.Passwords == nil || opts.TLSConfig != nil {
		t.Fatalf("options: %+v, %v", opts, err)
	}
	if pw, ok := opts.Passwords("anyone"); pw != "pw" || !ok {
		t.Errorf("Passwords(anyone) = %q, %v", pw, ok)
	}
	if _, err := (config{tlsCert: "/nonexistent.pem", tlsKey: "/nonexistent.key"}).wireOptions(nil); err == nil {
		t.Error("a missing certificate was accepted")
	}
}
