package nexmark

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/types"
)

var personSchema = types.ArrowSchema(PersonColumns)

// The person table's columns (PersonColumns).
const (
	personID = iota
	personName
	personEmail
	personCard
	personCity
	personState
	personDateTime
	personExtra
)

// personCols accumulates person rows for one batch: the columns of its
// projection only (the others stay empty and are never written).
type personCols struct {
	proj                           projection
	rows                           int
	id, ts                         []int64
	name, email, card, city, state strCol
	extra                          strCol
}

func newPersonCols(pool *bufPool, rows int, proj projection) *personCols {
	k := proj.cols
	return &personCols{
		proj: proj,
		id:   int64Buf(pool, k, personID, rows), ts: int64Buf(pool, k, personDateTime, rows),
		name: strColOf(k, personName, rows, 11, 14), email: strColOf(k, personEmail, rows, 12, 15),
		card: strColOf(k, personCard, rows, 19, 19), city: strColOf(k, personCity, rows, 8, 13),
		state: strColOf(k, personState, rows, 2, 2), extra: strColOf(k, personExtra, rows, 141, 183),
	}
}

// add appends the person of event id at event time ts (µs); random calls in
// Beam's order: name, email, credit card, city, state, extra. Every one is
// made (the lengths of the others size extra) but extra, the last, which
// is drawn only when built.
func (c *personCols) add(p *pools, r *rng, id, ts int64) {
	c.rows++
	k := c.proj.cols
	if k.has(personID) {
		c.id = append(c.id, firstPersonID+lastPerson(id))
	}
	if k.has(personDateTime) {
		c.ts = append(c.ts, ts)
	}
	first := firstNames[r.intn(int64(len(firstNames)))]
	last := lastNames[r.intn(int64(len(lastNames)))]
	if k.has(personName) {
		c.name.writeString(first)
		c.name.writeByte(' ')
		c.name.writeString(last)
		c.name.end()
	}
	size := int64(len(first) + 1 + len(last))

	user, host := p.word(r, 7), p.word(r, 5)
	if k.has(personEmail) {
		c.email.write(user)
		c.email.writeByte('@')
		c.email.write(host)
		c.email.writeString(".com")
		c.email.end()
	}
	size += int64(len(user) + 1 + len(host) + len(".com"))

	card := k.has(personCard)
	for i := 0; i < 4; i++ {
		g := r.intn(10000) * 4
		if !card {
			continue
		}
		if i > 0 {
			c.card.writeByte(' ')
		}
		c.card.write(p.digits[g : g+4])
	}
	if card {
		c.card.end()
	}
	size += 19

	city := usCities[r.intn(int64(len(usCities)))]
	if k.has(personCity) {
		c.city.addString(city)
	}
	state := usStates[r.intn(int64(len(usStates)))]
	if k.has(personState) {
		c.state.addString(state)
	}
	size += int64(len(city) + len(state))

	if k.has(personExtra) {
		c.extra.add(p.extraFor(r, 8+size, avgPersonBytes))
	}
}

func (c *personCols) record() arrow.RecordBatch {
	k := c.proj.cols
	var b recordBuilder
	b.int64s(k, personID, c.id, false)
	b.strings(k, personName, &c.name)
	b.strings(k, personEmail, &c.email)
	b.strings(k, personCard, &c.card)
	b.strings(k, personCity, &c.city)
	b.strings(k, personState, &c.state)
	b.int64s(k, personDateTime, c.ts, true)
	b.strings(k, personExtra, &c.extra)
	return b.record(c.proj.schema, c.rows)
}
