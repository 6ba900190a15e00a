package nexmark

import (
	"math/bits"
	"strconv"
)

// Fixed word lists (Beam's PersonGenerator and Flink's BidGenerator).
var (
	usStates    = []string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	usCities    = []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	firstNames  = []string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames   = []string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	hotChannels = []string{"Google", "Facebook", "Baidu", "Apple"}
)

const (
	extraPoolSize = 1 << 20
	wordPoolSize  = 1 << 16
)

// pools are the pre-generated strings events slice from. They are built
// once per Generator from the seed and never change afterwards.
type pools struct {
	extra    []byte   // 'a'..'z'; extras are exact-length slices of it
	words    []byte   // 'a'..'z' with ' ' w.p. 1/13; nextString slices (trimmed)
	digits   []byte   // "0000".."9999" back to back (credit-card groups)
	hotURLs  []string // one URL per hot channel
	channels []string // "channel-i"
	urls     []string // URL of channel i (with &channel_id= w.p. 9/10)
}

func newPools(seed uint64) *pools {
	r := rng{s: mix64(seed ^ 0x706F6F6C73)}
	p := &pools{
		extra:    make([]byte, extraPoolSize),
		words:    make([]byte, wordPoolSize),
		digits:   make([]byte, 0, 4*10000),
		hotURLs:  make([]string, len(hotChannels)),
		channels: make([]string, channelsNumber),
		urls:     make([]string, channelsNumber),
	}
	for i := range p.extra {
		p.extra[i] = byte('a' + r.intn(26))
	}
	for i := range p.words {
		if r.intn(13) == 0 {
			p.words[i] = ' '
		} else {
			p.words[i] = byte('a' + r.intn(26))
		}
	}
	for i := 0; i < 10000; i++ {
		p.digits = append(p.digits, byte('0'+i/1000), byte('0'+i/100%10), byte('0'+i/10%10), byte('0'+i%10))
	}
	for i := range p.hotURLs {
		p.hotURLs[i] = string(appendURL(nil, &r))
	}
	for i := range p.urls {
		p.channels[i] = "channel-" + strconv.Itoa(i)
		u := appendURL(nil, &r)
		if r.intn(10) > 0 {
			rev := int64(int32(bits.Reverse32(uint32(i))))
			if rev < 0 {
				rev = -rev
			}
			u = strconv.AppendInt(append(u, "&channel_id="...), rev, 10)
		}
		p.urls[i] = string(u)
	}
	return p
}

// appendURL appends Flink's random item URL.
func appendURL(dst []byte, r *rng) []byte {
	dst = append(dst, "https://www.nexmark.com/"...)
	dst = appendUnderscoreString(dst, r, 5)
	dst = append(dst, '/')
	dst = appendUnderscoreString(dst, r, 5)
	dst = append(dst, '/')
	dst = appendUnderscoreString(dst, r, 5)
	return append(dst, "/item.htm?query=1"...)
}

// appendUnderscoreString is Beam's nextString(max, '_') built char by char
// (used only while building pools).
func appendUnderscoreString(dst []byte, r *rng, max int64) []byte {
	n := minStringLength + r.intn(max-minStringLength)
	for i := int64(0); i < n; i++ {
		if r.intn(13) == 0 {
			dst = append(dst, '_')
		} else {
			dst = append(dst, byte('a'+r.intn(26)))
		}
	}
	return dst
}

// word returns Beam's nextString(max): length 3..max-1 before trimming
// spaces, sliced from the word pool.
func (p *pools) word(r *rng, max int64) []byte {
	n := minStringLength + r.intn(max-minStringLength)
	off := r.intn(int64(len(p.words)) - n)
	s := p.words[off : off+n]
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}

// extraFor returns Beam's nextExtra(currentSize, avg): a string padding an
// event to about avg bytes (±20%), sliced from the extra pool.
func (p *pools) extraFor(r *rng, current, avg int64) []byte {
	if current > avg {
		return nil
	}
	tgt := avg - current
	delta := (tgt*2 + 5) / 10 // round(0.2*tgt) for tgt >= 0
	n := tgt - delta
	if delta > 0 {
		n += r.intn(2 * delta)
	}
	off := r.intn(int64(len(p.extra)) - n)
	return p.extra[off : off+n]
}
