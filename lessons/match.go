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

// match pairs the objects of the reference snapshot ref with those of the
// learner's snapshot le. An object is a candidate for another when it is
// of the same kind and hangs off the matched parent (a context off the
// same device); among candidates the one with the fewest differences
// wins, then the one prev paired it with, then the one of the same name,
// then the oldest. Each learner object stands for one reference object
// at most.
func match(ref, le *snapshot, prev map[string]string) mapping {
	m := newMapping()
	for _, kind := range matchOrder {
		for _, s := range ref.objs {
			if s.kind != kind {
				continue
			}
			var best *objSnap
			bestScore := 0
			for _, l := range le.objs {
				if l.kind != kind || m.l2s[l.h] != "" || !sameKey(s, l, m) {
					continue
				}
				score := len(objDiffs(ref, le, s, l, m, false, false))
				better := best == nil || score < bestScore
				if !better && score == bestScore {
					switch {
					case prev[s.h] == l.h && prev[s.h] != best.h:
						better = true
					case prev[s.h] == best.h:
					case l.h == s.h && best.h != s.h:
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

// sameKey reports whether l may stand for s at all.
func sameKey(s, l *objSnap, m mapping) bool {
	if s.kind == "ctx" {
		return s.dev == l.dev
	}
	return s.parent != "" && m.s2l[s.parent] == l.parent
}
