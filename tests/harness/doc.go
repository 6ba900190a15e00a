// Package harness runs a streamsql server in-process for tests: the engine on
// a data directory and the wire protocol on a loopback port, restartable on
// the same data to test durability.
//
// Start is for tests; New is for programs (tests/cmd/sltrun). Backend adapts
// it to slt.Backend, giving every sqllogictest file its own fresh server.
package harness
