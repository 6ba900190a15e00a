package connector

import (
	"context"
	"strings"

	"github.com/streamsql/streamsql/connector/datagen"
	"github.com/streamsql/streamsql/connector/file"
	"github.com/streamsql/streamsql/connector/kafka"
	"github.com/streamsql/streamsql/connector/nexmark"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// The built-in connectors resume at positions (Resumable, Positioner).
var (
	_ pruner      = datagenSource{}
	_ pruner      = nexmarkSource{}
	_ Resumable   = datagenSource{}
	_ Resumable   = nexmarkSource{}
	_ Resumable   = fileSource{}
	_ Positioner  = (*datagen.Reader)(nil)
	_ Positioner  = (*nexmark.Reader)(nil)
	_ Positioner  = (*file.Reader)(nil)
	_ Resumable   = kafkaSource{}
	_ Checker     = kafkaSource{}
	_ Positioner  = (*kafka.Reader)(nil)
	_ Partitioned = (*kafka.Reader)(nil)
)

func init() {
	Register("datagen", openDatagen)
	Register("nexmark", openNexmark)
	registerEnv("file", openFile)
	Register("kafka", openKafka)
}

// datagenSource adapts a datagen.Config.
type datagenSource struct{ cfg datagen.Config }

func (s datagenSource) Columns() []types.Column    { return s.cfg.Columns }
func (s datagenSource) NewReader() (Reader, error) { return datagen.NewReader(s.cfg), nil }

// NewReaderWith implements OptionsSource: the reader of o's split.
func (s datagenSource) NewReaderWith(o ReaderOptions) (Reader, error) { return s.NewReaderAt(nil, o) }

// NewReaderAt implements Resumable: the position is a row number.
func (s datagenSource) NewReaderAt(pos []byte, o ReaderOptions) (Reader, error) {
	r := datagen.NewReader(s.cfg)
	if err := r.Split(o.Split, o.Splits); err != nil {
		return nil, err
	}
	if err := r.SetColumns(o.Columns); err != nil {
		return nil, err
	}
	if err := r.Seek(pos); err != nil {
		return nil, err
	}
	return r, nil
}

// prunesColumns: its readers take ReaderOptions.Columns.
func (datagenSource) prunesColumns() {}

// Finite implements Finite: a row count and no pacing.
func (s datagenSource) Finite() bool { return s.cfg.Limit() >= 0 && s.cfg.RowsPerSecond == 0 }

// generatedFormat checks the FORMAT clause of a generator: its rows are
// generated, not decoded, so only FORMAT PLAIN (RisingWave's spelling for
// generators) is taken; another format is refused by name, not ignored.
func generatedFormat(connector, format string) error {
	if format == "" || strings.EqualFold(format, "PLAIN") {
		return nil
	}
	return pgerr.New(pgerr.InvalidParameterValue, "a %s source cannot read FORMAT %s", connector, format).
		WithHint("Its rows are generated, not decoded: leave the FORMAT clause out.")
}

// openDatagen needs declared columns; FORMAT may only be PLAIN (the rows
// are generated, not decoded).
func openDatagen(cols []types.Column, opts map[string]string, format string) (Source, error) {
	if err := generatedFormat("datagen", format); err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return nil, pgerr.New(pgerr.InvalidTableDefinition, "a datagen source needs declared columns").
			WithHint("For example: CREATE SOURCE s (id bigint, v double precision) WITH (connector = 'datagen').")
	}
	cfg, err := datagen.ConfigFromOptions(cols, opts)
	if err != nil {
		return nil, err
	}
	return datagenSource{cfg}, nil
}

// nexmarkSource adapts a nexmark.Config with its Table set.
type nexmarkSource struct {
	cfg  nexmark.Config
	cols []types.Column
}

func (s nexmarkSource) Columns() []types.Column    { return s.cols }
func (s nexmarkSource) NewReader() (Reader, error) { return nexmark.NewReader(s.cfg), nil }

// NewReaderWith implements OptionsSource: the reader of o's split.
func (s nexmarkSource) NewReaderWith(o ReaderOptions) (Reader, error) { return s.NewReaderAt(nil, o) }

// NewReaderAt implements Resumable: the position is an event number.
func (s nexmarkSource) NewReaderAt(pos []byte, o ReaderOptions) (Reader, error) {
	r := nexmark.NewReader(s.cfg)
	if err := r.Split(o.Split, o.Splits); err != nil {
		return nil, err
	}
	if err := r.SetColumns(o.Columns); err != nil {
		return nil, err
	}
	if o.Route != nil {
		if o.Route.Owner2 != nil {
			r.SetRoute2(o.Route.Col, o.Route.Col2, o.Route.N, o.Route.Owner2) // false: unrouted
		} else {
			r.SetRoute(o.Route.Col, o.Route.N, o.Route.Owner) // false: it reads unrouted (Routes)
		}
	}
	if err := r.Seek(pos); err != nil {
		return nil, err
	}
	return r, nil
}

// prunesColumns: its readers take ReaderOptions.Columns.
func (nexmarkSource) prunesColumns() {}

// Finite implements Finite: an event count and no pacing.
func (s nexmarkSource) Finite() bool { return s.cfg.Events > 0 && !s.cfg.Paced }

// openNexmark requires the table option (a relation has one schema).
// Declared columns, if any, must be the table's (names and types in order;
// text is accepted for varchar); FORMAT is ignored.
func openNexmark(cols []types.Column, opts map[string]string, format string) (Source, error) {
	if err := generatedFormat("nexmark", format); err != nil {
		return nil, err
	}
	cfg, err := nexmark.ConfigFromOptions(opts)
	if err != nil {
		return nil, err
	}
	if cfg.Table == "" {
		return nil, pgerr.New(pgerr.InvalidParameterValue, `a nexmark source needs the option "table"`).
			WithHint("table = 'bid', 'auction' or 'person'.")
	}
	want := nexmark.Columns(cfg.Table)
	if len(cols) == 0 {
		return nexmarkSource{cfg: cfg, cols: want}, nil
	}
	if err := matchColumns(cols, want, cfg.Table); err != nil {
		return nil, err
	}
	return nexmarkSource{cfg: cfg, cols: cols}, nil
}

// matchColumns checks declared columns against nexmark table's.
func matchColumns(cols, want []types.Column, table string) error {
	names := make([]string, len(want))
	for i, c := range want {
		names[i] = c.Name + " " + c.Type.String()
	}
	expected := strings.Join(names, ", ")
	if len(cols) != len(want) {
		return pgerr.New(pgerr.InvalidTableDefinition, "nexmark table %s has %d columns, %d declared", table, len(want), len(cols)).
			WithDetail("Expected (%s), or no column list.", expected)
	}
	for i, c := range cols {
		w := want[i]
		same := c.Type.Equal(w.Type) || c.Type.Kind == types.Text && w.Type.Equal(types.TVarchar)
		if c.Name != w.Name || !same {
			return pgerr.New(pgerr.InvalidTableDefinition, "column %d of nexmark table %s is %s %s, declared %s %s",
				i+1, table, w.Name, w.Type, c.Name, c.Type).
				WithDetail("Expected (%s), or no column list.", expected)
		}
	}
	return nil
}

// fileSource adapts a file.Source.
type fileSource struct{ src *file.Source }

func (s fileSource) Columns() []types.Column { return s.src.Columns() }

// Finite implements Finite: the file is read once, not followed.
func (s fileSource) Finite() bool { return s.src.Finite() }
func (s fileSource) NewReader() (Reader, error) {
	return s.NewReaderWith(ReaderOptions{})
}
func (s fileSource) NewReaderWith(o ReaderOptions) (Reader, error) {
	return s.src.NewReader(file.ReaderOptions{Errors: o.Errors}), nil
}

// NewReaderAt implements Resumable: the position is a byte offset (with
// the line number and whether the csv header is still to skip).
func (s fileSource) NewReaderAt(pos []byte, o ReaderOptions) (Reader, error) {
	r := s.src.NewReader(file.ReaderOptions{Errors: o.Errors})
	if err := r.Seek(pos); err != nil {
		return nil, err
	}
	return r, nil
}

func openFile(cols []types.Column, opts map[string]string, format string, env Env) (Source, error) {
	src, err := file.OpenAccess(cols, opts, format, env.Files)
	if err != nil {
		return nil, err
	}
	return fileSource{src}, nil
}

// kafkaSource adapts a kafka.Source.
type kafkaSource struct{ src *kafka.Source }

func (s kafkaSource) Columns() []types.Column    { return s.src.Columns() }
func (s kafkaSource) NewReader() (Reader, error) { return s.NewReaderWith(ReaderOptions{}) }
func (s kafkaSource) NewReaderWith(o ReaderOptions) (Reader, error) {
	return kafkaReader{s.src.NewReader(kafka.ReaderOptions{Errors: o.Errors, Progress: o.Progress, Split: o.Split, Splits: o.Splits})}, nil
}

// NewReaderAt implements Resumable: the position is each partition's next
// offset.
func (s kafkaSource) NewReaderAt(pos []byte, o ReaderOptions) (Reader, error) {
	r := s.src.NewReader(kafka.ReaderOptions{Errors: o.Errors, Progress: o.Progress, Split: o.Split, Splits: o.Splits})
	if err := r.Seek(pos); err != nil {
		return nil, err
	}
	return kafkaReader{r}, nil
}

// kafkaReader adds Report to a kafka.Reader.
type kafkaReader struct{ *kafka.Reader }

// Report implements Reporter.
func (r kafkaReader) Report() Report {
	st := r.Status()
	rep := Report{State: st.State, LastError: st.LastError, Partitions: make([]PartitionReport, len(st.Partitions))}
	for i, p := range st.Partitions {
		rep.Partitions[i] = PartitionReport{Partition: p.Partition, Offset: p.Offset, HighWatermark: p.HighWatermark,
			Lag: p.Lag(), Rows: p.Rows, BadRows: p.BadRows, LastError: p.LastError}
	}
	return rep
}

// Check implements Checker: the brokers answer and the topic exists.
func (s kafkaSource) Check(ctx context.Context) error { return s.src.Check(ctx) }

func openKafka(cols []types.Column, opts map[string]string, format string) (Source, error) {
	src, err := kafka.Open(cols, opts, format)
	if err != nil {
		return nil, err
	}
	return kafkaSource{src}, nil
}
