package main

import (
	"flag"
	"fmt"
	"io"
)

// config is streamsqld's command line.
type config struct {
	listen  string
	dataDir string
}

// parseFlags reads the command line; errors and -h output go to stderr.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("streamsqld", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.listen, "listen", "127.0.0.1:5433", "address to accept PostgreSQL connections on")
	fs.StringVar(&cfg.dataDir, "data-dir", "./streamsql-data", "directory holding the catalog and table data")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return cfg, nil
}
