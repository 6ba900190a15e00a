package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
)

// checkWindowMarks refuses, at CREATE, a windowed aggregation under EMIT ON
// WINDOW CLOSE whose time column receives no watermark: its windows would
// never close and the view would stay empty forever. (checkEmit only knows
// that some input has a watermark.) The usual cause is a join with an
// ordinary table, which cannot pass the watermark on: a later change of the
// table retracts earlier output (a lookup join, FOR SYSTEM_TIME AS OF
// PROCTIME(), passes the stream's on). The error names the time column and
// what loses its watermark. A time column that comes from a materialized view is
// given the benefit of the doubt (the view's watermarks are known only
// while it runs).
func (s *streamPlanner) checkWindowMarks(env *Env, n stream.Node) error {
	if env == nil || env.Emit == nil {
		return nil
	}
	if w, ok := n.(*stream.WindowAgg); ok && w.Emit.Mode == stream.EmitOnWindowClose {
		col := w.Window.TimeCol
		if !slices.Contains(s.watermarkCols(w.Input), col) {
			if err := s.windowMarkErr(env, w.Input, col); err != nil {
				return err
			}
		}
	}
	for _, in := range n.Inputs() {
		if err := s.checkWindowMarks(env, in); err != nil {
			return err
		}
	}
	return nil
}

// windowMarkErr explains why column col of n carries no watermark, or
// returns nil when it cannot tell (a view's column).
func (s *streamPlanner) windowMarkErr(env *Env, n stream.Node, col int) error {
	e := env.Emit
	colName := n.Columns()[col].Name
	head := fmt.Sprintf("%s needs a watermark on the window's time column \"%s\", but ", e.Written, colName)
	at := func(msg string, args ...any) *pgerr.Error {
		return s.b.newErr(pgerr.InvalidObjectDefinition, int32(e.Pos), "%s", head+fmt.Sprintf(msg, args...)).(*pgerr.Error)
	}
	for {
		switch x := n.(type) {
		case *stream.Project:
			c, ok := x.Exprs[col].(*expr.ColRef)
			if !ok {
				return at("it is computed (%s), and a computed column carries no watermark", x.Exprs[col]).
					WithHint("Use the WATERMARK FOR column itself as the window's time column.")
			}
			n, col = x.Input, c.Idx
		case *stream.Filter:
			n = x.Input
		case *stream.ProjectSet:
			if col >= len(x.Input.Columns()) {
				return at("it is the value of a set-returning function, which carries no watermark").
					WithHint("Use the WATERMARK FOR column itself as the window's time column.")
			}
			n = x.Input
		case *stream.HashJoin:
			nl := len(x.Left.Columns())
			side, other, c := x.Left, x.Right, col
			if col >= nl {
				side, other, c = x.Right, x.Left, col-nl
			}
			if slices.Contains(s.watermarkCols(side), c) {
				origin := markOrigin(side, c)
				return at("the join with %s does not carry the watermark of %s", scanNames(other), origin).
					WithHint("A join passes a watermark on only through a join key that has one on both sides (a later change of the table retracts earlier output). " +
						"To enrich rows with a table's current values, make it a lookup join, which passes the stream's watermark on: " +
						"... JOIN other FOR SYSTEM_TIME AS OF PROCTIME() o ON ... . " +
						"Or window the watermarked input first and join its result: " +
						"FROM (SELECT window_start, k, count(*) AS n FROM TUMBLE(t, ts, ...) GROUP BY window_start, k) w JOIN other ON ...")
			}
			n, col = side, c
		case *stream.TemporalJoin:
			if nl := len(x.Stream.Columns()); col >= nl {
				return at("it comes from the table side of the lookup join with %s, which carries no watermark", scanNames(x.Table)).
					WithHint("Window on a time column of the stream side.")
			}
			n = x.Stream
		case *stream.Union:
			// Explain the first input whose column has no watermark.
			next := stream.Node(nil)
			for _, in := range x.Ins {
				if !slices.Contains(s.watermarkCols(in), col) {
					next = in
					break
				}
			}
			if next == nil {
				return nil
			}
			n = next
		case *stream.Scan:
			if x.Kind == stream.ScanView {
				return nil
			}
			return at("\"%s\".\"%s\" has no WATERMARK", relName(x), x.Cols[col].Name).
				WithHint("Declare WATERMARK FOR %s AS %s - INTERVAL '...' on \"%s\".", x.Cols[col].Name, x.Cols[col].Name, relName(x))
		default:
			return at("no watermark reaches it through %s", strings.SplitN(n.Explain(), "\n", 2)[0]).
				WithHint("Use a WATERMARK FOR column of a table or source, unchanged, as the window's time column.")
		}
	}
}

// markOrigin names the scan column that gives column col of n its
// watermark ("m"."ts"), or the column's name.
func markOrigin(n stream.Node, col int) string {
	name := fmt.Sprintf("\"%s\"", n.Columns()[col].Name)
	for {
		switch x := n.(type) {
		case *stream.Project:
			c, ok := x.Exprs[col].(*expr.ColRef)
			if !ok {
				return name
			}
			n, col = x.Input, c.Idx
		case *stream.Filter:
			n = x.Input
		case *stream.ProjectSet:
			if col >= len(x.Input.Columns()) {
				return name
			}
			n = x.Input
		case *stream.HashJoin:
			if nl := len(x.Left.Columns()); col < nl {
				n = x.Left
			} else {
				n, col = x.Right, col-nl
			}
		case *stream.TemporalJoin:
			if nl := len(x.Stream.Columns()); col < nl {
				n = x.Stream
			} else {
				n, col = x.Table, col-nl
			}
		case *stream.Scan:
			return fmt.Sprintf("\"%s\".\"%s\"", relName(x), x.Cols[col].Name)
		default:
			return name
		}
	}
}

// scanNames lists the relations n reads: "hosts", or "a", "b".
func scanNames(n stream.Node) string {
	var names []string
	var walk func(n stream.Node)
	walk = func(n stream.Node) {
		if sc, ok := n.(*stream.Scan); ok {
			if q := fmt.Sprintf("\"%s\"", relName(sc)); !slices.Contains(names, q) {
				names = append(names, q)
			}
			return
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	walk(n)
	if len(names) == 0 {
		return "its other input"
	}
	return strings.Join(names, ", ")
}

// relName is the relation a scan reads (its Name is "rel alias" when
// aliased).
func relName(sc *stream.Scan) string {
	name, _, _ := strings.Cut(sc.Name, " ")
	return name
}
