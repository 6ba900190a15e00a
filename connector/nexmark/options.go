package nexmark

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/pgerr"
)

// ConfigFromOptions builds a Config from a source's WITH options (keys in
// lower case, without connector). Accepted keys:
//
//	events             number of events, 0 = unbounded  (RisingWave: nexmark.event.num)
//	events_per_second  event-time rate, and wall-clock pace of a Reader (Paced)
//	                   (RisingWave: nexmark.min.event.gap.in.ns, as a gap)
//	seed               unsigned 64-bit seed
//	base_time          event time of event 0: a timestamp ('2015-07-15 00:00:00')
//	                   or milliseconds since 1970        (RisingWave: nexmark.base.time, ms)
//	first_event_id     id of event 0
//	table              person, auction or bid           (RisingWave: nexmark.table.type, any case)
//
// An unknown key or a bad value is a 22023 error naming it.
func ConfigFromOptions(opts map[string]string) (Config, error) {
	var cfg Config
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys) // report the first bad key deterministically
	for _, k := range keys {
		v := strings.TrimSpace(opts[k])
		var err error
		switch k {
		case "events", "nexmark.event.num":
			cfg.Events, err = strconv.ParseInt(v, 10, 64)
		case "events_per_second":
			cfg.EventsPerSecond, err = strconv.ParseFloat(v, 64)
			if err == nil && !(cfg.EventsPerSecond > 0) {
				err = strconv.ErrRange
			}
			cfg.Paced = true
		case "nexmark.min.event.gap.in.ns":
			var gap float64
			gap, err = strconv.ParseFloat(v, 64)
			if err == nil && !(gap > 0) {
				err = strconv.ErrRange
			}
			cfg.EventsPerSecond = 1e9 / gap
			cfg.Paced = true
		case "seed":
			cfg.Seed, err = strconv.ParseUint(v, 10, 64)
		case "base_time", "nexmark.base.time":
			cfg.BaseTime, err = parseBaseTime(v)
		case "first_event_id":
			cfg.FirstEventID, err = strconv.ParseInt(v, 10, 64)
		case "table", "nexmark.table.type":
			cfg.Table = strings.ToLower(v)
		default:
			return Config{}, pgerr.New(pgerr.InvalidParameterValue, "unrecognized nexmark option %q", k).
				WithHint("Options are table, events, events_per_second, seed, base_time and first_event_id (or RisingWave's nexmark.table.type, nexmark.event.num, nexmark.min.event.gap.in.ns and nexmark.base.time).")
		}
		if err != nil {
			return Config{}, pgerr.New(pgerr.InvalidParameterValue, "invalid value for nexmark option %q: %q", k, opts[k])
		}
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

func parseBaseTime(v string) (time.Time, error) {
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.UnixMilli(ms).UTC(), nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05.999999", "2006-01-02T15:04:05.999999Z07:00", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, strconv.ErrSyntax
}
