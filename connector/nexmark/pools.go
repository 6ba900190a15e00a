package nexmark

import "math/bits"

// Fixed word lists (Beam's PersonGenerator and Flink's BidGenerator).
var (
	usStates    = []string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	usCities    = []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	firstNames  = []string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames   = []string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	hotChannels = []string{"Google", "Facebook", "Baidu", "Apple"}
)

const (
	extraPoolSize = 1 << 16
	wordPoolSize  = 1 << 16
	urlPoolSize   = 1 << 12
)

// pools are the pre-generated strings events slice from. They are built
// once per Generator from the seed and never change afterwards. They are
// small on purpose: slicing at random offsets must hit the CPU cache (a
// 1 MiB extra pool and a 10,000-string channel cache cost a cache miss each).
type pools struct {
	seed    uint64
	extra   []byte   // 'a'..'z'; extras are exact-length slices of it
	words   []byte   // 'a'..'z' with ' ' w.p. 1/13; nextString slices (trimmed)
	urlPool []byte   // 'a'..'z' with '_' w.p. 1/13; URL path parts
	digits  []byte   // "0000".."9999" back to back (credit-card groups)
	hotURLs []string // one URL per hot channel
}

func newPools(seed uint64) *pools {
	r := rng{s: mix64(seed ^ 0x706F6F6C73)}
	p := &pools{
		seed:    seed,
		extra:   make([]byte, extraPoolSize),
		words:   make([]byte, wordPoolSize),
		urlPool: make([]byte, urlPoolSize),
		digits:  make([]byte, 0, 4*10000),
		hotURLs: make([]string, len(hotChannels)),
	}
	for i := range p.extra {
		p.extra[i] = byte('a' + r.intn(26))
	}
	fill := func(b []byte, special byte) {
		for i := range b {
			if r.intn(13) == 0 {
				b[i] = special
			} else {
				b[i] = byte('a' + r.intn(26))
			}
		}
	}
	fill(p.words, ' ')
	fill(p.urlPool, '_')
	for i := 0; i < 10000; i++ {
		p.digits = append(p.digits, byte('0'+i/1000), byte('0'+i/100%10), byte('0'+i/10%10), byte('0'+i%10))
	}
	for i := range p.hotURLs {
		var c strCol
		p.writeURL(&c, &r)
		p.hotURLs[i] = string(c.data[:c.n])
	}
	return p
}

// writeURL writes Flink's random item URL; each path part is Beam's
// nextString(5, '_') (3 or 4 chars) sliced from the URL pool.
func (p *pools) writeURL(c *strCol, r *rng) {
	c.writeString("https://www.nexmark.com/")
	for i := 0; i < 3; i++ {
		if i > 0 {
			c.writeByte('/')
		}
		n := minStringLength + r.intn(5-minStringLength)
		off := r.intn(urlPoolSize - n)
		c.write(p.urlPool[off : off+n])
	}
	c.writeString("/item.htm?query=1")
}

// appendChannelName and appendChannelURL append channel i of Flink's
// 10,000-entry channel cache to the channel and URL columns: "channel-i"
// and a URL that is a function of (seed, i) only, ending in
// "&channel_id=|reverse(i)|" with probability 9/10. They are computed
// rather than looked up (faster than a cache miss), each only when its
// column is built (the URL draws from its own stream, not the event's).
func appendChannelName(channel *strCol, i int64) {
	channel.writeString("channel-")
	channel.writeInt(i)
	channel.end()
}

func (p *pools) appendChannelURL(url *strCol, i int64) {
	r := rng{s: mix64(p.seed ^ 0x6368616E6E656C ^ uint64(i)*golden)}
	p.writeURL(url, &r)
	if r.intn(10) > 0 {
		rev := int64(int32(bits.Reverse32(uint32(i))))
		if rev < 0 {
			rev = -rev
		}
		url.writeString("&channel_id=")
		url.writeInt(rev)
	}
	url.end()
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
