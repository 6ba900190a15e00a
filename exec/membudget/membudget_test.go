package membudget

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/pgerr"
)

func TestBudget(t *testing.T) {
	pool := NewPool(100)
	a, b := NewQuery(pool, 60, 0), NewQuery(pool, 60, 0)
	if err := a.Grow(50); err != nil {
		t.Fatal(err)
	}
	var pe *pgerr.Error
	if err := a.Grow(20); !errors.As(err, &pe) || pe.Code != pgerr.OutOfMemory || pe.Detail != `Failed on request of size 20 in memory context "ExecutorState".` {
		t.Fatalf("over the statement's limit: %v", err)
	}
	if err := b.Grow(55); err == nil {
		t.Fatal("over the pool's limit was accepted")
	}
	acct := NewAccount(b)
	if err := acct.Grow(40); err != nil || pool.Used() != 90 {
		t.Fatalf("account: %v, pool %d", err, pool.Used())
	}
	acct.Release()
	a.Close()
	a.Close()
	if pool.Used() != 0 || b.Used() != 0 {
		t.Fatalf("after release: pool %d, b %d", pool.Used(), b.Used())
	}
	var q *Query // nil: unlimited
	if err := q.Grow(1 << 40); err != nil {
		t.Fatal(err)
	}
}

func TestArrayBytesOfSlices(t *testing.T) {
	bld := array.NewStringBuilder(memory.DefaultAllocator)
	for i := 0; i < 1000; i++ {
		bld.Append("0123456789")
	}
	arr := bld.NewArray()
	whole := ArrayBytes(arr)
	var sum int64
	for i := 0; i < 1000; i += 100 {
		sum += ArrayBytes(array.NewSlice(arr, int64(i), int64(i+100)))
	}
	if whole < 10000 || sum > whole+1000 {
		t.Fatalf("whole %d, slices %d", whole, sum)
	}
}

func TestStringLimits(t *testing.T) {
	if err := StringBuffer(1073741820, 12); err == nil || err.(*pgerr.Error).Detail != "Cannot enlarge string buffer containing 1073741820 bytes by 12 more bytes." {
		t.Fatalf("StringBuffer: %v", err)
	}
	if StringBuffer(0, MaxAllocSize-1) != nil {
		t.Fatal("the largest value was refused")
	}
	if err := AllocRequest(1200000004); err == nil || err.Error() != "invalid memory alloc request size 1200000004" {
		t.Fatalf("AllocRequest: %v", err)
	}
}
