package wire

import (
	"bytes"
	"context"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// statement is a prepared statement of the extended protocol.
type statement struct {
	name string
	// prep is nil for an empty query string (Execute answers
	// EmptyQueryResponse).
	prep *engine.Prepared
}

// paramTypes returns the statement's parameter types.
func (s *statement) paramTypes() []types.T {
	if s.prep == nil {
		return nil
	}
	return s.prep.ParamTypes
}

// columns returns the statement's result columns (nil: no rows).
func (s *statement) columns() []types.Column {
	if s.prep == nil {
		return nil
	}
	return s.prep.Columns
}

// portal is a bound statement, possibly part way through its rows.
type portal struct {
	name    string
	stmt    *statement
	params  []types.Value
	formats []int16 // result format per column

	// ctx lives as long as the portal, since a suspended portal's iterator
	// keeps running under it; cancel ends both.
	ctx    context.Context
	cancel context.CancelFunc

	started bool
	rows    *rowSource // set once a row-returning portal has executed
	tag     string     // the result's tag (verb only for rows)
	failed  bool
}

// parse handles Parse: one statement (or none) prepared under a name.
func (c *conn) parse(m *pgproto3.Parse) error {
	if m.Name == "" {
		c.dropStatement("")
	} else if _, ok := c.stmts[m.Name]; ok {
		return c.extendedError(pgerr.New(pgerr.DuplicatePreparedStatement, "prepared statement \"%s\" already exists", m.Name))
	}
	stmts, err := c.parseQuery(m.Query) // simple.go
	if err != nil {
		return c.extendedError(err)
	}
	if len(stmts) > 1 {
		return c.extendedError(pgerr.New(pgerr.SyntaxError, "cannot insert multiple commands into a prepared statement"))
	}
	s := &statement{name: m.Name}
	if len(stmts) == 1 {
		oids := append([]uint32(nil), m.ParameterOIDs...)
		ctx, done := c.startStatement()
		c.fo = c.sess.Format()
		err := c.call(func() error {
			var err error
			s.prep, err = c.sess.Prepare(ctx, stmts[0], oids)
			return err
		})
		if err == nil && s.prep == nil {
			err = errNoResult
		}
		err = statementError(ctx, err)
		done()
		if err != nil {
			return c.extendedError(err)
		}
	}
	c.stmts[m.Name] = s
	c.be.Send(&pgproto3.ParseComplete{})
	return nil
}

// lookupStatement finds a prepared statement or returns PostgreSQL's error.
func (c *conn) lookupStatement(name string) (*statement, error) {
	if s, ok := c.stmts[name]; ok {
		return s, nil
	}
	if name == "" {
		return nil, pgerr.New(pgerr.InvalidSQLStatementName, "unnamed prepared statement does not exist")
	}
	return nil, pgerr.New(pgerr.InvalidSQLStatementName, "prepared statement \"%s\" does not exist", name)
}

// lookupPortal finds a portal or returns PostgreSQL's error.
func (c *conn) lookupPortal(name string) (*portal, error) {
	if p, ok := c.portals[name]; ok {
		return p, nil
	}
	return nil, pgerr.New(pgerr.InvalidCursorName, "portal \"%s\" does not exist", name)
}

// bind handles Bind: a portal from a statement and parameter values.
func (c *conn) bind(m *pgproto3.Bind) error {
	s, err := c.lookupStatement(m.PreparedStatement)
	if err != nil {
		return c.extendedError(err)
	}
	if m.DestinationPortal == "" {
		c.dropPortal("")
	} else if _, ok := c.portals[m.DestinationPortal]; ok {
		return c.extendedError(pgerr.New(pgerr.DuplicateCursor, "cursor \"%s\" already exists", m.DestinationPortal))
	}
	ptypes := s.paramTypes()
	nf, np := len(m.ParameterFormatCodes), len(m.Parameters)
	if nf > 1 && nf != np {
		return c.extendedError(protocolError("bind message has %d parameter formats but %d parameters", nf, np))
	}
	if np != len(ptypes) {
		return c.extendedError(protocolError("bind message supplies %d parameters, but prepared statement \"%s\" requires %d", np, s.name, len(ptypes)))
	}
	c.fo = c.sess.Format()
	params := make([]types.Value, np)
	for i, raw := range m.Parameters {
		f, err := formatAt(m.ParameterFormatCodes, i)
		if err != nil {
			return c.extendedError(err)
		}
		if params[i], err = c.decodeParam(raw, f, ptypes[i]); err != nil {
			return c.extendedError(err)
		}
	}
	cols := s.columns()
	nr := len(m.ResultFormatCodes)
	if nr > 1 && nr != len(cols) {
		return c.extendedError(protocolError("bind message has %d result formats but query has %d columns", nr, len(cols)))
	}
	// Result format codes are checked when the portal runs, as in PostgreSQL
	// (Describe reports them as given).
	formats := make([]int16, len(cols))
	for i := range cols {
		formats[i] = formatText
		switch len(m.ResultFormatCodes) {
		case 0:
		case 1:
			formats[i] = m.ResultFormatCodes[0]
		default:
			formats[i] = m.ResultFormatCodes[i]
		}
	}
	p := &portal{name: m.DestinationPortal, stmt: s, params: params, formats: formats}
	p.ctx, p.cancel = context.WithCancel(c.srv.ctx)
	p.ctx = engine.WithNotices(p.ctx, c.sendNotice)
	p.ctx = pgerr.WithNoticeQueue(p.ctx, &c.notices)
	c.portals[p.name] = p
	c.be.Send(&pgproto3.BindComplete{})
	return nil
}

// formatAt applies the protocol's format code rules: no codes means all
// text, one code applies to all, otherwise one per item.
func formatAt(codes []int16, i int) (int16, error) {
	var f int16
	switch len(codes) {
	case 0:
		return formatText, nil
	case 1:
		f = codes[0]
	default:
		f = codes[i]
	}
	if f != formatText && f != formatBinary {
		return 0, pgerr.New(pgerr.InvalidParameterValue, "unsupported format code: %d", f)
	}
	return f, nil
}

// decodeParam turns one Bind parameter into its Go value (nil = NULL).
func (c *conn) decodeParam(raw []byte, format int16, t types.T) (v types.Value, err error) {
	if raw == nil {
		return nil, nil
	}
	defer c.recoverTo(&err)
	if format == formatBinary {
		if t.Kind == types.Unknown {
			return string(raw), nil
		}
		return types.ParseBinary(raw, t)
	}
	// PostgreSQL verifies every text-format parameter, whatever its type.
	if bytes.IndexByte(raw, 0) >= 0 || !utf8.Valid(raw) {
		return nil, types.CheckUTF8(string(raw))
	}
	if t.Kind == types.Unknown {
		return string(raw), nil
	}
	return types.ParseText(string(raw), t, &c.fo)
}

// describe handles Describe of a statement or a portal.
func (c *conn) describe(m *pgproto3.Describe) error {
	if m.ObjectType == 'S' {
		s, err := c.lookupStatement(m.Name)
		if err != nil {
			return c.extendedError(err)
		}
		ptypes := s.paramTypes()
		oids := make([]uint32, len(ptypes))
		for i, t := range ptypes {
			oids[i] = t.OID()
		}
		c.be.Send(&pgproto3.ParameterDescription{ParameterOIDs: oids})
		c.describeRows(s.columns(), nil)
		return nil
	}
	p, err := c.lookupPortal(m.Name)
	if err != nil {
		// SQL cursors are portals too in PostgreSQL; psycopg describes its
		// named cursors so.
		if cd, ok := c.sess.(cursorDescriber); ok {
			if cols, binary, found := cd.CursorColumns(m.Name); found {
				var formats []int16
				if binary {
					formats = make([]int16, len(cols))
					for i := range formats {
						formats[i] = formatBinary
					}
				}
				c.describeRows(cols, formats)
				return nil
			}
		}
		return c.extendedError(err)
	}
	c.describeRows(p.stmt.columns(), p.formats)
	return nil
}

// cursorDescriber is implemented by sessions with SQL cursors (DECLARE):
// the columns of an open cursor and whether it is BINARY.
type cursorDescriber interface {
	CursorColumns(name string) (cols []types.Column, binary, ok bool)
}

// describeRows sends RowDescription, or NoData for a statement without rows.
func (c *conn) describeRows(cols []types.Column, formats []int16) {
	if cols == nil {
		c.be.Send(&pgproto3.NoData{})
		return
	}
	c.be.Send(rowDescription(cols, formats))
}

// execute handles Execute: runs the portal, or continues a suspended one,
// sending at most MaxRows rows (0 = all).
func (c *conn) execute(m *pgproto3.Execute) error {
	p, err := c.lookupPortal(m.Portal)
	if err != nil {
		return c.extendedError(err)
	}
	if p.stmt.prep == nil {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return nil
	}
	if p.failed || (p.started && p.rows == nil) {
		return c.extendedError(pgerr.New(pgerr.ObjectNotInPrerequisiteState, "portal \"%s\" cannot be run", p.name))
	}
	for _, f := range p.formats {
		if f != formatText && f != formatBinary {
			return c.extendedError(pgerr.New(pgerr.InvalidParameterValue, "unsupported format code: %d", f))
		}
	}
	c.reportActive(p.stmt.prep.Stmt.Source) // activity.go
	c.setRunning(p.cancel)
	defer c.setRunning(nil)
	c.fo = c.sess.Format()
	if !p.started {
		p.started = true
		var res *engine.Result
		err := c.call(func() error {
			var err error
			res, err = c.sess.Execute(p.ctx, p.stmt.prep, p.params)
			return err
		})
		if err == nil && res == nil {
			err = errNoResult
		}
		if err != nil {
			p.failed = true
			return c.extendedError(statementError(p.ctx, err))
		}
		if res.Rows == nil || res.CopyIn != nil || res.CopyOut != nil {
			if err := c.sendResult(p.ctx, res); err != nil {
				p.failed = true
				return c.extendedError(statementError(p.ctx, err))
			}
			return nil
		}
		c.sendResultExtras(res)
		p.rows = newRowSource(res.Rows, res.Columns, p.formats)
		p.tag = res.Tag
	}
	n, done, err := p.rows.send(p.ctx, c, int64(m.MaxRows))
	if err != nil {
		p.failed = true
		p.rows.close()
		return c.extendedError(statementError(p.ctx, err))
	}
	c.drainNotices()
	if done {
		c.be.Send(&pgproto3.CommandComplete{CommandTag: rowsTag(p.tag, n)})
	} else {
		c.be.Send(&pgproto3.PortalSuspended{})
	}
	return nil
}

// closeMsg handles Close of a statement or portal; closing one that does not
// exist is not an error.
func (c *conn) closeMsg(m *pgproto3.Close) error {
	if m.ObjectType != 'S' && m.ObjectType != 'P' {
		return c.extendedError(protocolError("invalid CLOSE message subtype %d", m.ObjectType))
	}
	if m.ObjectType == 'S' {
		c.dropStatement(m.Name)
	} else {
		c.dropPortal(m.Name)
	}
	c.be.Send(&pgproto3.CloseComplete{})
	return nil
}

// sync handles Sync: the end of an extended-protocol exchange.
func (c *conn) sync() error {
	c.skipToSync = false
	c.endOfTransactionPortals()
	return c.readyForQuery()
}

func (c *conn) dropStatement(name string) {
	delete(c.stmts, name)
}

func (c *conn) dropPortal(name string) {
	p, ok := c.portals[name]
	if !ok {
		return
	}
	delete(c.portals, name)
	p.cancel()
	if p.rows != nil {
		p.rows.close()
	}
}

// endOfTransactionPortals drops every portal when no transaction block is
// open: portals do not outlive their transaction, and outside a block each
// Sync or simple query ends one.
func (c *conn) endOfTransactionPortals() {
	if c.sess.TxStatus() != 'I' {
		return
	}
	for name := range c.portals {
		c.dropPortal(name)
	}
}
