package expr

import (
	"strings"
	"sync"
	"sync/atomic"
)

// to_char templates are usually constants, and a row kernel sees the
// template once per row: parsing it each time was most of to_char's cost.
// A template is compiled once (dchCompile for timestamps and intervals,
// numParse for numbers) and kept in a process-wide cache keyed by its
// text. The cache is safe for concurrent use (operators run in parallel
// goroutines): entries are immutable once stored, and readers copy the
// per-call state (numDesc) before using it. It is bounded: when it holds
// more than fmtCacheMax templates (a query building templates from its
// data) it is emptied and refills. Templates that fail to parse are not
// cached, so their error is reported as before.

// fmtCacheMax bounds the templates kept per cache.
const fmtCacheMax = 512

// fmtCache maps a template to its compiled form T.
type fmtCache[T any] struct {
	m sync.Map // string -> T
	n atomic.Int64
}

// get returns f compiled, compiling (and caching) it on a miss. The key
// and everything compile keeps of it come from a copy of f: a template
// read from an Arrow array may share that array's buffer, which is
// released after the batch.
func (c *fmtCache[T]) get(f string, compile func(string) (T, error)) (T, error) {
	if v, ok := c.m.Load(f); ok {
		return v.(T), nil
	}
	f = strings.Clone(f)
	v, err := compile(f)
	if err != nil {
		return v, err
	}
	if c.n.Add(1) > fmtCacheMax {
		c.m.Clear()
		c.n.Store(1)
	}
	c.m.Store(f, v)
	return v, nil
}

// dchNode is one item of a compiled datetime template: literal text
// (id == ""), or a keyword with its FM prefix and TH/th suffix.
type dchNode struct {
	lit string
	id  string
	fm  bool
	th  string // "TH", "th" or ""
}

var dchCache fmtCache[[]dchNode]

// dchCompile parses a datetime template into nodes, reading it exactly as
// PostgreSQL's parse_format does (see toCharDT); adjacent literal
// characters become one node.
func dchCompile(f string) ([]dchNode, error) {
	var nodes []dchNode
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			nodes = append(nodes, dchNode{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(f); {
		fm := false
		if strings.HasPrefix(f[i:], "FM") || strings.HasPrefix(f[i:], "fm") {
			fm = true
			i += 2
		} else if strings.HasPrefix(f[i:], "TM") || strings.HasPrefix(f[i:], "tm") {
			i += 2
		}
		if i >= len(f) {
			break
		}
		var kw *dchKeyword
		for k := range dchKeywords {
			if strings.HasPrefix(f[i:], dchKeywords[k].name) {
				kw = &dchKeywords[k]
				break
			}
		}
		if kw == nil {
			switch {
			case f[i] == '"':
				i++
				for i < len(f) {
					if f[i] == '"' {
						i++
						break
					}
					if f[i] == '\\' && i+1 < len(f) {
						i++
					}
					lit.WriteByte(f[i])
					i++
				}
			case f[i] == '\\' && i+1 < len(f) && f[i+1] == '"':
				lit.WriteByte('"')
				i += 2
			default:
				lit.WriteByte(f[i])
				i++
			}
			continue
		}
		flush()
		i += len(kw.name)
		th := ""
		if strings.HasPrefix(f[i:], "TH") || strings.HasPrefix(f[i:], "th") {
			th = f[i : i+2]
			i += 2
		} else if strings.HasPrefix(f[i:], "SP") {
			i += 2
		}
		nodes = append(nodes, dchNode{id: kw.id, fm: fm, th: th})
	}
	flush()
	return nodes, nil
}

// numTemplate is a parsed number template; d is shared and must be
// copied before use (the formatters adjust it per value).
type numTemplate struct {
	nodes []numNode
	d     numDesc
}

var numCache fmtCache[*numTemplate]

// numCompiled returns f's nodes and a fresh copy of its numDesc.
func numCompiled(f string) ([]numNode, *numDesc, error) {
	t, err := numCache.get(f, func(f string) (*numTemplate, error) {
		nodes, d, err := numParse(f)
		if err != nil {
			return nil, err
		}
		return &numTemplate{nodes: nodes, d: *d}, nil
	})
	if err != nil {
		return nil, nil, err
	}
	d := t.d
	return t.nodes, &d, nil
}
