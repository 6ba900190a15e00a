package file

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/connector/internal/decode"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Format is a file's encoding.
type Format uint8

// Formats.
const (
	CSV Format = iota
	JSON
)

func (f Format) String() string {
	if f == JSON {
		return "json"
	}
	return "csv"
}

// Source is a validated file source (see the package documentation).
type Source struct {
	path      string
	format    Format
	header    bool
	delimiter byte
	follow    bool
	maxLine   int    // a longer record is skipped as bad
	access    Access // where the file may be
	cols      []types.Column
	dec       *decode.Schema
}

// Path is the file read.
func (s *Source) Path() string { return s.path }

// Format is the file's format.
func (s *Source) Format() Format { return s.format }

// Follow reports whether readers keep polling the file at its end.
func (s *Source) Follow() bool { return s.follow }

// Finite reports whether the reader ends at the end of the file (no follow).
func (s *Source) Finite() bool { return !s.follow }

// Columns are the declared columns.
func (s *Source) Columns() []types.Column { return s.cols }

// DefaultMaxLineBytes is max_line_bytes when not given: a record (a line,
// or a csv record spanning lines) longer than this is skipped as bad.
const DefaultMaxLineBytes = 16 << 20

// maxMaxLineBytes bounds the option (a reader holds a whole record).
const maxMaxLineBytes = 1 << 30

// MaxLineBytes is the longest record read; longer ones are skipped as bad.
func (s *Source) MaxLineBytes() int { return s.maxLine }

// Open validates a file source under the zero Access (see OpenAccess).
func Open(cols []types.Column, opts map[string]string, format string) (*Source, error) {
	return OpenAccess(cols, opts, format, Access{})
}

// OpenAccess validates a file source: cols are the declared columns, opts
// the WITH options except connector (keys lower case), format the FORMAT
// clause ("", "JSON" or "CSV"), acc where files may be read. Bad options are
// 22023 errors naming the option; no columns is 42P16; a path acc forbids
// is 42501; a directory, FIFO or device is 42809; a missing file is 58P01
// unless follow is set (a follower waits for the file to appear). Readers
// check acc again when they open the file.
func OpenAccess(cols []types.Column, opts map[string]string, format string, acc Access) (*Source, error) {
	if len(cols) == 0 {
		return nil, pgerr.New(pgerr.InvalidTableDefinition, "a file source needs declared columns")
	}
	s := &Source{cols: cols, delimiter: ',', dec: decode.NewSchema(cols, len(cols)), maxLine: DefaultMaxLineBytes, access: acc}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys) // report the first bad key deterministically
	var fmtOpt, delimOpt, headerOpt string
	for _, k := range keys {
		v := opts[k]
		switch k {
		case "path":
			s.path = v
		case "format":
			fmtOpt = k
		case "header":
			b, err := parseBool(k, v)
			if err != nil {
				return nil, err
			}
			s.header, headerOpt = b, k
		case "follow":
			b, err := parseBool(k, v)
			if err != nil {
				return nil, err
			}
			s.follow = b
		case "delimiter":
			if len(v) != 1 || v[0] == '"' || v[0] == '\n' || v[0] == '\r' {
				return nil, invalidOption(k, v, "must be a single one-byte character other than a quote or a newline")
			}
			s.delimiter, delimOpt = v[0], k
		case "max_line_bytes":
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n < 1 || n > maxMaxLineBytes {
				return nil, invalidOption(k, v, fmt.Sprintf("must be a whole number of bytes from 1 to %d", maxMaxLineBytes))
			}
			s.maxLine = int(n)
		default:
			return nil, pgerr.New(pgerr.InvalidParameterValue, "unrecognized file option %q", k).
				WithHint("Options are path, format, header, delimiter, follow and max_line_bytes.")
		}
	}
	if strings.TrimSpace(s.path) == "" {
		return nil, pgerr.New(pgerr.InvalidParameterValue, `a file source needs the option "path"`)
	}
	if err := s.setFormat(fmtOpt, opts[fmtOpt], format); err != nil {
		return nil, err
	}
	if s.format == JSON {
		for _, k := range []string{headerOpt, delimOpt} {
			if k != "" {
				return nil, pgerr.New(pgerr.InvalidParameterValue, "file option %q applies only to format csv", k)
			}
		}
	}
	if err := acc.check(s.path, s.follow); err != nil {
		return nil, err
	}
	return s, nil
}

// setFormat settles the format from the option, the FORMAT clause or the
// path's extension.
func (s *Source) setFormat(key, opt, clause string) error {
	var fromOpt, fromClause string
	if key != "" {
		fromOpt = strings.ToLower(strings.TrimSpace(opt))
		if fromOpt != "csv" && fromOpt != "json" {
			return invalidOption(key, opt, "must be csv or json")
		}
	}
	if clause != "" {
		fromClause = strings.ToLower(clause)
		if fromClause != "csv" && fromClause != "json" {
			return pgerr.New(pgerr.InvalidParameterValue, "a file source cannot read FORMAT %s", clause).
				WithHint("Use FORMAT CSV or FORMAT JSON.")
		}
	}
	f := fromOpt
	switch {
	case fromOpt != "" && fromClause != "" && fromOpt != fromClause:
		return pgerr.New(pgerr.InvalidParameterValue, "file option \"format\" is %s but the FORMAT clause says %s", fromOpt, clause)
	case f == "":
		f = fromClause
	}
	if f == "" {
		switch strings.ToLower(filepath.Ext(s.path)) {
		case ".csv":
			f = "csv"
		case ".json", ".jsonl", ".ndjson":
			f = "json"
		default:
			return pgerr.New(pgerr.InvalidParameterValue, "the format of file %q is not known", s.path).
				WithHint("Add format = 'csv' or format = 'json' to the WITH options.")
		}
	}
	if f == "json" {
		s.format = JSON
	}
	return nil
}

// fileError is the SQLSTATE error for failing to open or read path.
func fileError(path string, err error) error {
	code := pgerr.IOError
	if errors.Is(err, fs.ErrNotExist) {
		code = pgerr.UndefinedFile
	} else if errors.Is(err, fs.ErrPermission) {
		code = pgerr.InsufficientPrivilege
	}
	msg := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		msg = pe.Err.Error()
	}
	return pgerr.Wrap(err, code, "could not read file %q: %s", path, msg)
}

func parseBool(k, v string) (bool, error) {
	b, err := types.ParseText(v, types.TBool, nil)
	if err != nil {
		return false, invalidOption(k, v, "must be true or false")
	}
	return b.(bool), nil
}

func invalidOption(k, v, why string) error {
	return pgerr.New(pgerr.InvalidParameterValue, "invalid value for file option %q: %q", k, v).WithDetail("%s", why)
}
