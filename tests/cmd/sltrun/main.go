// Command sltrun runs sqllogictest files against a PostgreSQL-protocol server
// and prints, per file, "name: P passed, F failed, S skipped", then the total
// "N passed, N failed, N skipped" as its last line. It exits 1 when a record
// failed.
//
//	go run ./tests/cmd/sltrun -addr 127.0.0.1:5432 -engine postgresql files-or-dirs...
//	go run ./tests/cmd/sltrun -embedded tests/slt
//	go run ./tests/cmd/sltrun -rewrite tests/slt/expr.slt   # fill results from PostgreSQL
//
// Against a server (-addr) every file runs in its own scratch database,
// created and dropped around it, so the server must support CREATE DATABASE
// (PostgreSQL does). With -embedded every file gets a fresh in-process
// streamsql on a temporary data directory.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/streamsql/streamsql/tests/harness"
	"github.com/streamsql/streamsql/tests/slt"
)

func main() {
	var (
		addr     = flag.String("addr", "127.0.0.1:5432", "server host:port (ignored with -embedded)")
		user     = flag.String("user", "postgres", "user name")
		password = flag.String("password", os.Getenv("PGPASSWORD"), "password (default $PGPASSWORD)")
		dbname   = flag.String("dbname", "postgres", "maintenance database used to create scratch databases")
		embedded = flag.Bool("embedded", false, "run an in-process streamsql for each file")
		engines  = flag.String("engine", "", `engine names for skipif/onlyif, comma-separated (default "postgresql", or "streamsql,postgresql" with -embedded)`)
		skipFile = flag.String("skip", "", "skip list file (path:line reason)")
		rewrite  = flag.Bool("rewrite", false, "rewrite the files in place with the results the server returns")
		jobs     = flag.Int("j", 1, "files run in parallel")
		maxFail  = flag.Int("max-failures", 5, "failures printed per file (-1: none)")
		times    = flag.Bool("times", false, "print each file's run time to stderr")
		extended = flag.Bool("extended", false, "use the extended query protocol (one statement per record)")
		slow     = flag.Duration("slow", 0, "print records that take at least this long (e.g. 1s)")
	)
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: sltrun [flags] files-or-directories...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	files, base, err := collect(flag.Args())
	if err != nil {
		fatal(err)
	}

	opt := slt.Options{Out: os.Stdout, Base: base, MaxFailures: *maxFail, Rewrite: *rewrite, Extended: *extended, Slow: *slow}
	var backend slt.Backend
	if *embedded {
		backend = &harness.Backend{}
		opt.Engines = []string{"streamsql", "postgresql"}
	} else {
		backend = &slt.ServerBackend{
			ConnString: fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable", *user, *password, *addr, *dbname),
			Prefix:     "sltrun",
		}
		opt.Engines = []string{"postgresql"}
	}
	if *engines != "" {
		opt.Engines = strings.Split(*engines, ",")
	}
	if *skipFile != "" {
		if opt.Skip, err = slt.LoadSkipList(*skipFile); err != nil {
			fatal(err)
		}
	}

	start := time.Now()
	results := runAll(backend, opt, files, *jobs)
	var total slt.Totals
	for i, r := range results {
		total.Add(r)
		if *times {
			fmt.Fprintf(os.Stderr, "%8.1fs  %s\n", r.Duration.Seconds(), r.Name)
		}
		if *rewrite && r.Rewritten != "" {
			if err := os.WriteFile(files[i], []byte(r.Rewritten), 0o644); err != nil {
				fatal(err)
			}
		}
	}
	fmt.Printf("%d files in %.1fs\n", len(files), time.Since(start).Seconds())
	fmt.Println(total.String())
	if total.Failed > 0 {
		os.Exit(1)
	}
}

// runAll runs files on jobs goroutines, each with its own Runner, and returns
// the results in file order. Output lines of parallel files interleave by
// file, never within one file's report.
func runAll(backend slt.Backend, opt slt.Options, files []string, jobs int) []*slt.FileResult {
	results := make([]*slt.FileResult, len(files))
	next := make(chan int)
	var wg sync.WaitGroup
	var outMu sync.Mutex
	for j := 0; j < max(jobs, 1); j++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				var buf strings.Builder
				o := opt
				o.Out = &buf
				results[i] = slt.NewRunner(o).RunFile(context.Background(), backend, files[i])
				outMu.Lock()
				fmt.Print(buf.String())
				outMu.Unlock()
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

// collect expands the arguments into script files and picks the directory
// file names are reported against: the first directory argument, or the
// first file's directory.
func collect(args []string) ([]string, string, error) {
	files, err := slt.FindScripts(args...)
	if err != nil {
		return nil, "", err
	}
	base := filepath.Dir(args[0])
	for _, a := range args {
		if st, err := os.Stat(a); err == nil && st.IsDir() {
			base = a
			break
		}
	}
	return files, base, nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "sltrun:", err)
	os.Exit(2)
}
