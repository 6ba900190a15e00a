package file

import (
	"context"
	"sort"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/connector/sink/encode"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// The file sink (connector = 'file'; docs/sinks.md): a directory of
// JSON-lines, CSV or Parquet files, exactly-once by atomic commit.
//
// Files are written hidden (".<name>.inprogress"), closed and renamed to a
// hidden staged name carrying their epoch (".<final>.pending") at each
// checkpoint's PreCommit, whose pending bytes list them, and renamed to
// their final, visible name ("<sink>-w<writer>-<epoch>-<n>.<ext>") at
// Commit, once the checkpoint is durable. Rename is atomic, so a reader
// never sees a partial file; final names are unique per epoch, so never a
// duplicated one. Recover renames what the checkpoint's pending lists
// (renames already done are skipped) and deletes every other hidden file of
// the writer (output after the checkpoint, to be written again).
// sink_writer.go is the writer; sink_parquet.go the Parquet files.

func init() { sink.Register("file", OpenSink) }

// DefaultMaxFileBytes is max_file_bytes when not given: a file that grows
// past it is closed and the next rows go to a new one (within the epoch).
const DefaultMaxFileBytes = 128 << 20

// sinkOptions are the file sink's own WITH options. format ('json',
// 'csv' or 'parquet') is the FORMAT clause given as an option, as the
// file source takes it.
var sinkOptions = []string{"path", "format", "partition_by", "max_file_bytes", "header"}

// FileSink is a validated file sink; immutable.
type FileSink struct {
	spec      sink.Spec
	dir       string
	format    encode.Format
	partition []int // columns of partition_by, outer directory first; nil none
	maxBytes  int64
	header    bool // CSV: a header line in every file
	ext       string
}

// OpenSink validates a file sink's options (sink.OpenFunc).
func OpenSink(spec sink.Spec) (sink.Sink, error) {
	var unknown []string
	for k := range spec.Options {
		if !encode.IsOption(k) && !contains(sinkOptions, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		all := append(append([]string(nil), sinkOptions...), encode.Options...)
		return nil, pgerr.New(pgerr.InvalidParameterValue, "unknown file sink option \"%s\"", unknown[0]).
			WithHint("Options are %s and %s.", strings.Join(all[:len(all)-1], ", "), all[len(all)-1])
	}
	if v, ok := spec.Options["format"]; ok {
		if spec.Format != "" {
			return nil, pgerr.New(pgerr.SyntaxError, "the file sink's format is given twice, by the option format and by FORMAT %s", spec.Format).
				WithHint("Give one of them.")
		}
		switch f := strings.ToUpper(strings.TrimSpace(v)); f {
		case "JSON", "CSV", "PARQUET":
			spec.Format = f
		default:
			return nil, pgerr.New(pgerr.InvalidParameterValue, "invalid value for file sink option \"format\": \"%s\"", v).
				WithHint("Formats are json, csv and parquet.")
		}
	}
	f, err := encode.Parse(spec, "file", encode.JSON, encode.CSV, encode.Parquet)
	if err != nil {
		return nil, err
	}
	if f.Kind == encode.Upsert {
		return nil, pgerr.Unsupported("the file sink cannot write FORMAT UPSERT: files have no keys to overwrite").
			WithHint("Use FORMAT DEBEZIUM ENCODE JSON to write every change, or a kafka sink.")
	}
	s := &FileSink{spec: spec, format: f, maxBytes: DefaultMaxFileBytes}
	s.dir = spec.Options["path"]
	if s.dir == "" {
		return nil, pgerr.New(pgerr.InvalidParameterValue, "a file sink needs path = 'directory'")
	}
	if spec.AllowPath != nil {
		if err := spec.AllowPath(s.dir); err != nil {
			return nil, err
		}
	}
	if v, ok := spec.Options["partition_by"]; ok {
		for _, part := range strings.Split(v, ",") {
			name := strings.TrimSpace(part)
			if len(name) >= 2 && name[0] == '"' && name[len(name)-1] == '"' {
				name = name[1 : len(name)-1]
			} else {
				name = strings.ToLower(name)
			}
			idx := -1
			for i, c := range spec.Cols {
				if c.Name == name {
					idx = i
				}
			}
			if idx < 0 {
				return nil, pgerr.New(pgerr.UndefinedColumn, "partition_by column \"%s\" is not a column of the sink's query", strings.TrimSpace(part))
			}
			s.partition = append(s.partition, idx)
		}
	}
	if v, ok := spec.Options["max_file_bytes"]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 1 {
			return nil, pgerr.New(pgerr.InvalidParameterValue, "invalid value for file sink option \"max_file_bytes\": \"%s\"", v).
				WithHint("A positive number of bytes.")
		}
		s.maxBytes = n
	}
	if v, ok := spec.Options["header"]; ok {
		if f.Encoding != encode.CSV {
			return nil, pgerr.New(pgerr.InvalidParameterValue, "file sink option \"header\" applies to FORMAT CSV only")
		}
		switch strings.ToLower(v) {
		case "true", "on", "1":
			s.header = true
		case "false", "off", "0":
		default:
			return nil, pgerr.New(pgerr.InvalidParameterValue, "invalid value for file sink option \"header\": \"%s\"", v)
		}
	}
	switch {
	case f.Encoding == encode.Parquet:
		s.ext = "parquet"
		if err := parquetColumnsOK(spec.Cols); err != nil {
			return nil, err
		}
	case f.Encoding == encode.CSV:
		s.ext = "csv"
	default:
		s.ext = "jsonl"
	}
	return s, nil
}

// Dir is the directory the sink writes into.
func (s *FileSink) Dir() string { return s.dir }

// NewWriter implements sink.Sink: a fresh start deletes the writer's
// hidden files left by an earlier run (nothing committed them).
func (s *FileSink) NewWriter(ctx context.Context, writer int) (sink.Writer, error) {
	return s.Recover(ctx, writer, 0, nil)
}

// Recover implements sink.Sink.
func (s *FileSink) Recover(ctx context.Context, writer int, epoch uint64, pending []byte) (sink.Writer, error) {
	w, err := newFileWriter(s, writer)
	if err != nil {
		return nil, err
	}
	if err := w.recover(epoch, pending); err != nil {
		return nil, err
	}
	return w, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// partitionDir renders a partition value as a Hive-style directory name
// "col=value": the value's text output with '/', '\', '=', '%', control
// characters and a leading '.' escaped as %XX; NULL is
// __HIVE_DEFAULT_PARTITION__ (Hive's and Spark's name).
func partitionDir(col string, v types.Value, t types.T) string {
	if v == nil {
		return col + "=__HIVE_DEFAULT_PARTITION__"
	}
	text := types.FormatText(v, t, nil)
	var b strings.Builder
	b.WriteString(col)
	b.WriteByte('=')
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c < 0x20 || c == '/' || c == '\\' || c == '=' || c == '%' || c == 0x7f || (i == 0 && c == '.') || c == ':' {
			b.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(c)>>4, 16)+strconv.FormatUint(uint64(c)&15, 16)))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
