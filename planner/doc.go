// Package planner binds PostgreSQL parse trees against the catalog and plans
// them into trees of exec.Node.
//
//	SELECT k, count(*) FROM t WHERE v > 10 GROUP BY k ORDER BY 2 DESC LIMIT 5
//
//	Limit 5
//	  Sort count DESC
//	    HashAgg keys=[k] aggs=[count(*)]
//	      Scan t [k, v] filter=(v > 10)
package planner
