package nexmark

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/pgerr"
)

func TestConfigFromOptions(t *testing.T) {
	cfg, err := ConfigFromOptions(map[string]string{
		"events": "50000", "events_per_second": "100000", "seed": "42",
		"base_time": "2020-01-02 03:04:05", "first_event_id": "7", "table": "bid",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Events: 50000, EventsPerSecond: 100000, Seed: 42,
		BaseTime: time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC), FirstEventID: 7, Table: "bid", Paced: true}
	if cfg != want {
		t.Errorf("got %+v, want %+v", cfg, want)
	}
	// RisingWave's spellings.
	cfg, err = ConfigFromOptions(map[string]string{"nexmark.table.type": "Auction",
		"nexmark.base.time": "1436918400000", "nexmark.min.event.gap.in.ns": "100000", "nexmark.event.num": "10"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Table != "auction" || !cfg.BaseTime.Equal(DefaultBaseTime) || cfg.EventsPerSecond != 10000 || cfg.Events != 10 || !cfg.Paced {
		t.Errorf("RisingWave options: %+v", cfg)
	}
	for _, bad := range []map[string]string{
		{"rate": "1"}, {"events": "x"}, {"events_per_second": "0"}, {"seed": "-1"},
		{"base_time": "yesterday"}, {"table": "bids"}, {"nexmark.min.event.gap.in.ns": "0"},
	} {
		if _, err := ConfigFromOptions(bad); pgerr.CodeOf(err) != pgerr.InvalidParameterValue {
			t.Errorf("%v: got %v, want 22023", bad, err)
		}
	}
	// An unknown option's error lists the options (max_events is not one).
	_, err = ConfigFromOptions(map[string]string{"max_events": "10"})
	var pe *pgerr.Error
	if !errors.As(err, &pe) {
		t.Fatalf("unknown option: %v, not a pgerr.Error", err)
	}
	if !strings.Contains(pe.Message, `"max_events"`) || !strings.Contains(pe.Hint, "events_per_second") {
		t.Errorf("unknown option: %v (hint %q)", err, pe.Hint)
	}
}
