package lessons

// A mapping pairs the lesson's objects — the handles of the reference
// session, which replays the lesson's own cells — with the learner's:
// s2l["mr1"] = "mr2" when the learner's mr2 stands where the lesson's mr1
// does (a re-registered buffer, say). Objects are matched by structure,
// never by handle number.
type mapping struct {
	s2l, l2s map[string]string
}

func newMapping() mapping { return mapping{s2l: map[string]string{}, l2s: map[string]string{}} }

func (m mapping) pair(s, l string) {
	m.s2l[s] = l
	m.l2s[l] = s
}

// learner names the learner's object for the lesson's handle h: its own
// handle when matched, else the lesson's name.
func (m mapping) learner(h string) string {
	if h == "" {
		return ""
	}
	if l, ok := m.s2l[h]; ok {
		return l
	}
	return h
}

// matchOrder is the order kinds are matched in: each kind's keys refer to
// kinds before it.
var matchOrder = []string{"ctx", "pd", "xrcd", "ch", "cq", "mr", "srq", "ah", "qp"}

// stepStart is what a step's pairing keeps from the step's start: the
// pairing then (lock) and both sessions as they were (ref, le). Nil when
// the start itself is being paired.
type stepStart struct {
	lock    mapping
	ref, le *snapshot
}

// match pairs the objects of the reference snapshot ref with those of the
// learner's snapshot le. An object is a candidate for another when it is
// of the same kind and hangs off the matched parent (a context off the
// same device); among candidates the one with the fewest differences
// wins, then one as old as it (both made in the step, or neither), then
// the one prev paired it with, then the oldest, so that objects alike are
// paired in the order they were made, whatever their numbers. Each
// learner object stands for one reference object at most.
// Within a step (at non-nil) the pairs found unambiguous at the step's
// start hold (at.lock, unambiguous): a learner object paired then stands
// for its partner or for nothing, and a lesson object whose partner is
// still there stands for it alone, so the step's goal names the same
// objects from start to end.
func match(ref, le *snapshot, prev map[string]string, at *stepStart) mapping {
	m := newMapping()
	for _, kind := range matchOrder {
		for _, s := range ref.objs {
			if s.kind != kind {
				continue
			}
			locked := ""
			if at != nil {
				if l := at.lock.s2l[s.h]; l != "" && le.by[l] != nil {
					locked = l
				}
			}
			var best *objSnap
			bestScore := 0
			for _, l := range le.objs {
				if l.kind != kind || m.l2s[l.h] != "" || !sameKey(s, l, m) {
					continue
				}
				if at != nil {
					if was := at.lock.l2s[l.h]; was != "" && was != s.h || locked != "" && l.h != locked {
						continue
					}
				}
				score := len(objDiffs(ref, le, s, l, m, false, false))
				better := best == nil || score < bestScore
				if !better && score == bestScore {
					age := at.made(true, s.h) // l's age against best's
					switch lAlike, bestAlike := at.made(false, l.h) == age, at.made(false, best.h) == age; {
					case lAlike != bestAlike:
						better = lAlike
					case prev[s.h] == l.h && prev[s.h] != best.h:
						better = true
					}
				}
				if better {
					best, bestScore = l, score
				}
			}
			if best != nil {
				m.pair(s.h, best.h)
			}
		}
	}
	return m
}

// made reports whether h, of the reference's session (ref) or the
// learner's, was made in the step; false outside a step.
func (at *stepStart) made(ref bool, h string) bool {
	if at == nil {
		return false
	}
	sn := at.le
	if ref {
		sn = at.ref
	}
	return sn != nil && sn.by[h] == nil
}

// sameKey reports whether l may stand for s at all.
func sameKey(s, l *objSnap, m mapping) bool {
	if s.kind == "ctx" {
		return s.dev == l.dev
	}
	return s.parent != "" && m.s2l[s.parent] == l.parent
}

// unambiguous keeps the pairs of m, found between ref and le, where no
// other object is as close a match to either side: of two QPs alike at a
// step's start, either may turn out to be the one the step works on.
// Links count (a QP's peer), since m pairs every object already.
func unambiguous(ref, le *snapshot, m mapping) mapping {
	out := newMapping()
	score := func(s, l *objSnap) int { return len(objDiffs(ref, le, s, l, m, true, false)) }
	for _, s := range ref.objs {
		l := le.by[m.s2l[s.h]]
		if l == nil {
			continue
		}
		best, tie := score(s, l), false
		for _, l2 := range le.objs {
			if l2 != l && l2.kind == s.kind && sameKey(s, l2, m) && score(s, l2) <= best {
				tie = true
				break
			}
		}
		for _, s2 := range ref.objs {
			if tie {
				break
			}
			if s2 != s && s2.kind == s.kind && sameKey(s2, l, m) && score(s2, l) <= best {
				tie = true
			}
		}
		if !tie {
			out.pair(s.h, l.h)
		}
	}
	return out
}
