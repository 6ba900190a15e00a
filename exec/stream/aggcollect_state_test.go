package stream

import (
	"slices"
	"testing"
)

// TestCollectSeqsInMeta: the arrival counters of string_agg and array_agg
// round-trip through HashAgg's and WindowAgg's meta records, are absent
// (the records unchanged) without such aggregates, and merge by maximum
// when rescaling.
func TestCollectSeqsInMeta(t *testing.T) {
	m := aggMeta{started: true, next: 3, sent: map[int]int64{1: 7}, wm: 1, outWM: 2, late: 3}
	plain := appendAggMeta(nil, m, true)
	m.seqs = []int64{5, 1 << 40}
	withSeqs := appendAggMeta(nil, m, true)
	if !slices.Equal(withSeqs[:len(plain)], plain) || len(withSeqs) <= len(plain) {
		t.Fatalf("counters are not appended to the record: %x, without %x", withSeqs, plain)
	}
	got, err := decodeAggMeta(withSeqs, true, 2)
	if err != nil || !slices.Equal(got.seqs, m.seqs) {
		t.Fatalf("decoded %v, %v; want %v", got.seqs, err, m.seqs)
	}
	if _, err := decodeAggMeta(withSeqs, true, 1); err == nil {
		t.Fatal("a record with two counters decoded for a plan with one")
	}
	if _, err := decodeAggMeta(plain, true, 1); err == nil {
		t.Fatal("a record without counters decoded for a plan with one")
	}
	if got, err := decodeAggMeta(plain, true, 0); err != nil || got.seqs != nil {
		t.Fatalf("record without counters: %v, %v", got.seqs, err)
	}

	acc := aggMeta{sent: map[int]int64{}}
	mergeAggMeta(&acc, aggMeta{sent: map[int]int64{}, seqs: []int64{4, 9}}, true)
	mergeAggMeta(&acc, aggMeta{sent: map[int]int64{}, seqs: []int64{6, 2}}, false)
	if want := []int64{6, 9}; !slices.Equal(acc.seqs, want) {
		t.Fatalf("merged counters %v, want %v", acc.seqs, want)
	}

	w := waggMeta{na: 2, nk: 1, wm: 10, outWM: 9, late: 1, nextSer: 4}
	wplain := appendWaggMeta(nil, w)
	if got, err := decodeWaggMeta(wplain); err != nil || got.seqs != nil || got.nextSer != 4 {
		t.Fatalf("windowagg record without counters: %+v, %v", got, err)
	}
	w.seqs = []int64{0, 300}
	wgot, err := decodeWaggMeta(appendWaggMeta(nil, w))
	if err != nil || !slices.Equal(wgot.seqs, w.seqs) || wgot.nextSer != 4 {
		t.Fatalf("windowagg decoded %+v, %v; want counters %v", wgot, err, w.seqs)
	}
	if _, err := decodeWaggMeta(append(wplain, 0x80)); err == nil {
		t.Fatal("a cut counter decoded")
	}
}

// TestSetCollectSeqs: counters go to the string_agg and array_agg states in
// aggregate order; a count that differs from the plan's is an error.
func TestSetCollectSeqs(t *testing.T) {
	a, b := &collectCol{}, &collectCol{str: true}
	aggs := []aggCol{&countCol{star: true}, a, &countCol{}, b}
	if err := setCollectSeqs(aggs, []int64{3, 8}); err != nil {
		t.Fatal(err)
	}
	if a.seq != 3 || b.seq != 8 || !slices.Equal(collectSeqs(aggs), []int64{3, 8}) {
		t.Fatalf("counters %d, %d", a.seq, b.seq)
	}
	if err := setCollectSeqs(aggs, []int64{3}); err == nil {
		t.Fatal("one counter for two aggregates accepted")
	}
	if err := setCollectSeqs(aggs, []int64{3, 8, 1}); err == nil {
		t.Fatal("three counters for two aggregates accepted")
	}
	if collectSeqs([]aggCol{&countCol{}}) != nil {
		t.Fatal("counters for a plan without string_agg or array_agg")
	}
}
