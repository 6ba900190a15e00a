package nexmark

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/types"
)

var personSchema = types.ArrowSchema(PersonColumns)

// personCols accumulates person rows for one batch.
type personCols struct {
	id, ts                         []int64
	name, email, card, city, state strCol
	extra                          strCol
}

func newPersonCols(rows int) *personCols {
	return &personCols{
		id: make([]int64, 0, rows), ts: make([]int64, 0, rows),
		name: newStrCol(rows, 11, 14), email: newStrCol(rows, 12, 15), card: newStrCol(rows, 19, 19),
		city: newStrCol(rows, 8, 13), state: newStrCol(rows, 2, 2), extra: newStrCol(rows, 141, 183),
	}
}

// add appends the person of event id at event time ts (µs); random calls in
// Beam's order: name, email, credit card, city, state, extra.
func (c *personCols) add(p *pools, r *rng, id, ts int64) {
	c.id = append(c.id, firstPersonID+lastPerson(id))
	c.ts = append(c.ts, ts)
	c.name.writeString(firstNames[r.intn(int64(len(firstNames)))])
	c.name.writeByte(' ')
	c.name.writeString(lastNames[r.intn(int64(len(lastNames)))])
	c.name.end()
	size := c.name.valueLen(c.name.rows - 1)

	c.email.write(p.word(r, 7))
	c.email.writeByte('@')
	c.email.write(p.word(r, 5))
	c.email.writeString(".com")
	c.email.end()
	size += c.email.valueLen(c.email.rows - 1)

	for i := 0; i < 4; i++ {
		if i > 0 {
			c.card.writeByte(' ')
		}
		k := r.intn(10000) * 4
		c.card.write(p.digits[k : k+4])
	}
	c.card.end()
	size += 19

	city := usCities[r.intn(int64(len(usCities)))]
	c.city.addString(city)
	state := usStates[r.intn(int64(len(usStates)))]
	c.state.addString(state)
	size += int64(len(city) + len(state))

	c.extra.add(p.extraFor(r, 8+size, avgPersonBytes))
}

func (c *personCols) record() arrow.RecordBatch {
	return record(personSchema, len(c.id),
		int64Array(c.id, false), c.name.array(), c.email.array(), c.card.array(),
		c.city.array(), c.state.array(), int64Array(c.ts, true), c.extra.array())
}
