package planner

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	pg "github.com/pganalyze/pg_query_go/v6"
)

type arrowBatch = arrow.RecordBatch

func fmtErr(format string, args ...any) error { return fmt.Errorf(format, args...) }

func itoa(i int) string { return strconv.Itoa(i) }

// figureName names a select-list item without an alias, as PostgreSQL's
// FigureColname does.
func figureName(n *pg.Node) string {
	if s := figure(n); s != "" {
		return s
	}
	return "?column?"
}

// weakName says whether n's figured name is one a cast's type name
// replaces (PostgreSQL's FigureColnameInternal strength 1 or 0): a CASE, a
// cast of such, or nothing; so x::numeric::float8 is named float8.
func weakName(n *pg.Node) bool {
	switch {
	case n == nil:
		return true
	case n.GetTypeCast() != nil:
		return weakName(n.GetTypeCast().Arg)
	case n.GetCaseExpr() != nil:
		return true
	}
	return figure(n) == ""
}

func figure(n *pg.Node) string {
	switch {
	case n == nil:
		return ""
	case n.GetColumnRef() != nil:
		// the last field name, a "*" skipped: t.* is named t
		f := n.GetColumnRef().Fields
		for i := len(f) - 1; i >= 0; i-- {
			if s := f[i].GetString_(); s != nil {
				return s.Sval
			}
		}
	case n.GetAIndirection() != nil:
		ind := n.GetAIndirection()
		for i := len(ind.Indirection) - 1; i >= 0; i-- {
			if s := ind.Indirection[i].GetString_(); s != nil {
				return s.Sval
			}
		}
		return figure(ind.Arg)
	case n.GetFuncCall() != nil:
		return funcNameLast(n.GetFuncCall().Funcname)
	case n.GetAExpr() != nil:
		a := n.GetAExpr()
		if a.Kind == pg.A_Expr_Kind_AEXPR_NULLIF {
			return "nullif"
		}
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		if s := figure(tc.Arg); s != "" && !weakName(tc.Arg) {
			return s
		}
		names := strs(tc.TypeName.Names)
		if len(names) > 0 {
			return names[len(names)-1]
		}
	case n.GetCollateClause() != nil:
		return figure(n.GetCollateClause().Arg)
	case n.GetSubLink() != nil:
		sl := n.GetSubLink()
		switch sl.SubLinkType {
		case pg.SubLinkType_EXISTS_SUBLINK:
			return "exists"
		case pg.SubLinkType_ARRAY_SUBLINK:
			return "array"
		case pg.SubLinkType_EXPR_SUBLINK:
			s := sl.Subselect.GetSelectStmt()
			for s != nil && s.Op != pg.SetOperation_SETOP_NONE && s.Larg != nil {
				s = s.Larg // a set operation's columns are named by its first arm
			}
			if s != nil && len(s.ValuesLists) > 0 {
				return "column1"
			}
			if s != nil && len(s.TargetList) == 1 {
				rt := s.TargetList[0].GetResTarget()
				if rt.Name != "" {
					return rt.Name
				}
				return figure(rt.Val)
			}
		}
	case n.GetCaseExpr() != nil:
		if s := figure(n.GetCaseExpr().Defresult); s != "" {
			return s
		}
		return "case"
	case n.GetAArrayExpr() != nil:
		return "array"
	case n.GetRowExpr() != nil:
		return "row"
	case n.GetCoalesceExpr() != nil:
		return "coalesce"
	case n.GetMinMaxExpr() != nil:
		if n.GetMinMaxExpr().Op == pg.MinMaxOp_IS_LEAST {
			return "least"
		}
		return "greatest"
	case n.GetSqlvalueFunction() != nil:
		return sqlValueName(n.GetSqlvalueFunction().Op)
	}
	return ""
}

func funcNameLast(ns []*pg.Node) string {
	parts := strs(ns)
	if len(parts) == 0 {
		return ""
	}
	return parts[len(parts)-1]
}

func sqlValueName(op pg.SQLValueFunctionOp) string {
	switch op {
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		return "current_date"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME_N:
		return "current_time"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
		return "current_timestamp"
	case pg.SQLValueFunctionOp_SVFOP_LOCALTIME, pg.SQLValueFunctionOp_SVFOP_LOCALTIME_N:
		return "localtime"
	case pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		return "localtimestamp"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:
		return "current_role"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_USER:
		return "current_user"
	case pg.SQLValueFunctionOp_SVFOP_USER:
		return "user"
	case pg.SQLValueFunctionOp_SVFOP_SESSION_USER:
		return "session_user"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
		return "current_catalog"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
		return "current_schema"
	}
	return ""
}
