package file

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

func TestOpenErrors(t *testing.T) {
	csv := writeFile(t, "a.csv", "1\n")
	dir := filepath.Dir(csv)
	c := cols(t, "a int")
	for _, tc := range []struct {
		opts   map[string]string
		format string
		code   pgerr.Code
		msg    string // part of the message
	}{
		{map[string]string{}, "", pgerr.InvalidParameterValue, `"path"`},
		{map[string]string{"path": csv, "color": "red"}, "", pgerr.InvalidParameterValue, `"color"`},
		{map[string]string{"path": csv, "format": "xml"}, "", pgerr.InvalidParameterValue, `"format"`},
		{map[string]string{"path": csv}, "AVRO", pgerr.InvalidParameterValue, "AVRO"},
		{map[string]string{"path": csv, "format": "csv"}, "JSON", pgerr.InvalidParameterValue, "FORMAT"},
		{map[string]string{"path": csv, "format": "json", "header": "true"}, "", pgerr.InvalidParameterValue, `"header"`},
		{map[string]string{"path": csv, "header": "maybe"}, "", pgerr.InvalidParameterValue, `"header"`},
		{map[string]string{"path": csv, "follow": "2"}, "", pgerr.InvalidParameterValue, `"follow"`},
		{map[string]string{"path": csv, "delimiter": ";;"}, "", pgerr.InvalidParameterValue, `"delimiter"`},
		{map[string]string{"path": csv, "delimiter": `"`}, "", pgerr.InvalidParameterValue, `"delimiter"`},
		{map[string]string{"path": filepath.Join(dir, "data.txt")}, "", pgerr.InvalidParameterValue, "format"},
		{map[string]string{"path": filepath.Join(dir, "missing.csv")}, "", pgerr.UndefinedFile, "missing.csv"},
		{map[string]string{"path": dir, "format": "csv"}, "", pgerr.WrongObjectType, "directory"},
	} {
		_, err := Open(c, tc.opts, tc.format)
		if pgerr.CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Open(%v, %q) = %v (%s), want %s mentioning %s", tc.opts, tc.format, err, pgerr.CodeOf(err), tc.code, tc.msg)
		}
	}
	_, err := Open(nil, map[string]string{"path": csv}, "")
	wantCode(t, err, pgerr.InvalidTableDefinition)
}

func TestOpenSettings(t *testing.T) {
	dir := t.TempDir()
	c := cols(t, "a int")
	for _, tc := range []struct {
		opts   map[string]string
		format string
		want   Format
	}{
		{map[string]string{"path": writeFile(t, "x.csv", "")}, "", CSV},
		{map[string]string{"path": writeFile(t, "x.JSONL", "")}, "", JSON},
		{map[string]string{"path": writeFile(t, "x.ndjson", "")}, "", JSON},
		{map[string]string{"path": writeFile(t, "x.csv", ""), "format": " JSON "}, "", JSON},
		{map[string]string{"path": writeFile(t, "x.log", "")}, "CSV", CSV},
		{map[string]string{"path": writeFile(t, "x.log", ""), "format": "json"}, "JSON", JSON},
		// A follower may wait for its file.
		{map[string]string{"path": filepath.Join(dir, "later.json"), "follow": "on"}, "", JSON},
	} {
		s := mustOpen(t, c, tc.opts, tc.format)
		if s.Format() != tc.want {
			t.Errorf("%v %q: format %v, want %v", tc.opts, tc.format, s.Format(), tc.want)
		}
	}
	s := mustOpen(t, c, map[string]string{"path": writeFile(t, "y.csv", ""), "follow": "true", "header": "yes", "delimiter": "\t"}, "")
	if !s.Follow() || !s.header || s.delimiter != '\t' {
		t.Errorf("settings %+v", s)
	}
}
