package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// RisingWave's SESSION WITH GAP window frame (OVER (PARTITION BY ...
// ORDER BY ts SESSION WITH GAP '10 minutes')): the lifter blanks it out
// of the text PostgreSQL parses and keeps it as a SessionFrame whose Open
// is the offset of its window specification's '(', which is where
// PostgreSQL's WindowDef.Location points. SessionWindows pairs the two;
// DeparseSessions writes the frames back into a deparsed query (a view's
// stored text), which PostgreSQL's deparser cannot.

// SessionWindows maps the Location of each WindowDef of root that has a
// SESSION WITH GAP frame to that frame.
func SessionWindows(root *pg.Node, frames []SessionFrame) map[int32]SessionFrame {
	if len(frames) == 0 || root == nil {
		return nil
	}
	out := map[int32]SessionFrame{}
	eachWindowDef(root.ProtoReflect(), func(wd *pg.WindowDef) {
		for _, f := range frames {
			if int(wd.Location) == f.Open {
				out[wd.Location] = f
			}
		}
	})
	return out
}

// eachWindowDef calls f on every window specification of a parse tree
// (OVER (...) and WINDOW w AS (...)).
func eachWindowDef(m protoreflect.Message, f func(*pg.WindowDef)) {
	walkMessages(m, func(m protoreflect.Message) bool {
		if wd, ok := m.Interface().(*pg.WindowDef); ok {
			f(wd)
		}
		return true
	})
}

// DeparseSessions is Deparse for a query whose window specifications at
// the locations of wins (SessionWindows) end with SESSION WITH GAP
// frames: each such window is deparsed with a placeholder frame (ROWS
// BETWEEN CURRENT ROW AND <name> FOLLOWING) that is then replaced by the
// frame as written, so that the stored query plans the same after a
// restart (DeparseExtended).
func DeparseSessions(stmt *pg.Node, wins map[int32]SessionFrame) (string, error) {
	return DeparseExtended(stmt, nil, wins)
}

// PostgreSQL's FRAMEOPTION_* bits used by DeparseSessions' placeholder
// frame.
const (
	frameNonDefault         = 0x00001
	frameRows               = 0x00004
	frameBetween            = 0x00010
	frameStartCurrentRow    = 0x00200
	frameEndOffsetFollowing = 0x04000
)
