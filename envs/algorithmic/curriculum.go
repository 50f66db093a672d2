package algorithmic

// Curriculum is gym's _check_levelup: it records the shortfall (episode reward - len(target)) of
// every episode that a reset ends, keeps the last `window` of them, and raises min_length by one
// (clearing the record) once it holds `window` shortfalls all >= threshold, until MaxMinLength.
type Curriculum struct {
	start     int // the task's starting min_length, the lowest a restored state may hold
	minLength int
	threshold float64
	ring      []float64
	count     int // shortfalls held, <= len(ring)
	next      int // ring slot of the next shortfall
	below     int // held shortfalls < threshold
}

func newCurriculum(t Task) *Curriculum {
	return &Curriculum{start: t.StartMinLength(), minLength: t.StartMinLength(), threshold: t.PromotionThreshold(), ring: make([]float64, t.CurriculumWindow())}
}

// MinLength is the current minimum input length; reset draws min_length + {0, 1, 2}.
func (c *Curriculum) MinLength() int { return c.minLength }

// Recorded is the number of shortfalls held since the last level-up.
func (c *Curriculum) Recorded() int { return c.count }

// record adds one shortfall and levels up when the spec says so.
func (c *Curriculum) record(shortfall float64) {
	if c.count == len(c.ring) {
		if c.ring[c.next] < c.threshold {
			c.below--
		}
	} else {
		c.count++
	}
	c.ring[c.next] = shortfall
	if shortfall < c.threshold {
		c.below++
	}
	c.next = (c.next + 1) % len(c.ring)
	if c.count == len(c.ring) && c.below == 0 && c.minLength < MaxMinLength {
		c.minLength++
		c.count, c.next, c.below = 0, 0, 0
	}
}
