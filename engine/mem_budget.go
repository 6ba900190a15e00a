package engine

import (
	"bufio"
	"os"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/exec/membudget"
)

// Memory limits of batch queries (docs/sql.md, "Memory limits"): every
// statement execution gets a membudget.Query of statement_mem_limit bytes
// (at most the server's Config.QueryMemoryLimit) that reserves from the
// engine's pool of Config.MemoryLimit bytes, so that no combination of
// statements passes the server's limit. The streaming runtime keeps its
// own state and is not counted here.

// DefaultQueryMemoryLimit is one statement's memory limit when
// Config.QueryMemoryLimit is 0.
const DefaultQueryMemoryLimit = 1 << 30

// memoryPool returns the server-wide pool for cfg.MemoryLimit: 0 means 75%
// of the machine's (or the cgroup's) memory, negative means unlimited.
func memoryPool(limit int64) *membudget.Pool {
	if limit == 0 {
		if total := SystemMemory(); total > 0 {
			limit = total / 4 * 3
		}
	}
	return membudget.NewPool(limit)
}

// queryBudget makes one statement execution's budget.
func (e *Engine) queryBudget(st *settings) *membudget.Query {
	limit := e.cfg.QueryMemoryLimit
	if limit == 0 {
		limit = DefaultQueryMemoryLimit
	}
	if v := st.memoryBytes("statement_mem_limit"); v > 0 && (limit <= 0 || v < limit) {
		limit = v
	}
	return membudget.NewQuery(e.pool, limit, st.memoryBytes("work_mem"))
}

// SystemMemory returns the memory this process may use: the cgroup's limit
// when there is one, else MemTotal from /proc/meminfo; 0 when unknown.
func SystemMemory() int64 {
	var total int64
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				total = kb * 1024
				break
			}
		}
		f.Close()
	}
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && v > 0 && (total == 0 || v < total) {
			total = v
		}
	}
	return total
}
