package shell

import (
	"strings"

	"github.com/vsh-rdma/vsh/verbs"
)

// Suggestion is one completion: the text to insert and what it is.
type Suggestion struct {
	Text        string
	Description string
}

// WordSeparators are the characters after which a suggestion's text goes:
// a suggestion completes the part of the line after the last of them.
const WordSeparators = " =,:+"

// Complete returns the completions for the end of line: command names,
// handles, argument names (as "key="), and values — states, flags, opcodes,
// MTUs, devices — each with a description. Each suggestion replaces the
// text after the last blank, '=', ',', ':' or '+':
//
//	Complete("modify_qp qp0 state=r") → rtr, rts, reset
func (s *Shell) Complete(line string) []Suggestion {
	body, _ := splitBang(line)
	toks, err := tokenize(body)
	if err != nil {
		return nil
	}
	if strings.Contains(body, "#") {
		// A comment may have swallowed the end of the line.
		if len(toks) == 0 || toks[len(toks)-1].end < len(strings.TrimRight(body, " \t")) {
			return nil
		}
	}
	word := ""
	done := toks
	if len(toks) > 0 && (body == "" || !isBlank(body[len(body)-1])) {
		word = toks[len(toks)-1].text
		done = toks[:len(toks)-1]
	}
	if len(done) == 0 {
		var out []Suggestion
		for _, c := range s.cmds {
			out = append(out, Suggestion{c.Name, c.Summary})
		}
		return filter(out, word)
	}
	cmd, ok := s.byKey[strings.ToLower(done[0].text)]
	if !ok {
		return nil
	}
	return s.completeArgs(cmd, done[1:], word)
}

func (s *Shell) completeArgs(cmd *command, done []token, word string) []Suggestion {
	if cmd.rawArgs {
		if cmd.complete == nil {
			return nil
		}
		return cmd.complete(s, done, word)
	}
	if i := strings.IndexByte(word, '='); i >= 0 {
		k := strings.ToLower(word[:i])
		sp := cmd.findSpec(k, keyArg)
		if sp == nil {
			return nil
		}
		return s.completeValue(*sp, word[i+1:], done)
	}
	npos := 0
	given := map[string]bool{}
	for _, t := range done {
		switch {
		case t.eq >= 0:
			if sp := cmd.findSpec(strings.ToLower(t.text[:t.eq]), keyArg); sp != nil {
				given[sp.name] = true
			}
		case cmd.findSpec(strings.ToLower(t.text), flagArg) != nil:
			given[cmd.findSpec(strings.ToLower(t.text), flagArg).name] = true
		default:
			npos++
		}
	}
	var out []Suggestion
	poss := cmd.positionals()
	if npos < len(poss) {
		out = append(out, s.completeValue(poss[npos], word, done)...)
		if poss[npos].req {
			return out
		}
	}
	for _, sp := range cmd.Args {
		if given[sp.name] {
			continue
		}
		switch sp.kind {
		case keyArg:
			out = append(out, Suggestion{sp.name + "=", sp.help})
		case flagArg:
			out = append(out, Suggestion{sp.name, sp.help})
		}
	}
	return filter(out, word)
}

// completeValue suggests values of a given kind for the text typed so far.
func (s *Shell) completeValue(sp argSpec, typed string, done []token) []Suggestion {
	frag := typed
	if i := strings.LastIndexAny(typed, ",:+"); i >= 0 {
		frag = typed[i+1:]
		if sp.value == vSGE || sp.value == vRemote || sp.value == vAddr {
			return nil // an offset or a length comes after the MR
		}
	}
	var out []Suggestion
	names := func(list []string, desc string) {
		for _, n := range list {
			out = append(out, Suggestion{n, desc})
		}
	}
	handles := func(k kind) {
		for _, o := range s.h.ofKind(k) {
			out = append(out, Suggestion{o.name, s.handleDesc(o)})
		}
	}
	long := strings.HasPrefix(strings.ToLower(frag), "ibv_")
	for _, k := range handleKinds[sp.value] {
		handles(k)
	}
	switch sp.value {
	case vAnyHandle:
		for _, o := range s.h.all() {
			out = append(out, Suggestion{o.name, s.handleDesc(o)})
		}
	case vDevice:
		s.deviceSuggestions(&out)
	case vGID:
		handles(kQP)
		handles(kCtx)
		s.deviceSuggestions(&out)
	case vState:
		out = s.stateSuggestions(done, long)
	case vQPType, vQPTypeEx:
		types := []verbs.QPType{verbs.QPTypeRC, verbs.QPTypeUC, verbs.QPTypeUD}
		if sp.value == vQPTypeEx {
			types = append(types, verbs.QPTypeXRCSend, verbs.QPTypeXRCRecv)
		}
		for _, t := range types {
			out = append(out, Suggestion{pick(long, t.String(), t.Short()), qpTypeText[t]})
		}
	case vSRQType:
		out = []Suggestion{{pick(long, verbs.SRQTypeBasic.String(), verbs.SRQTypeBasic.Short()), "an SRQ as create_srq makes it"},
			{pick(long, verbs.SRQTypeXRC.String(), verbs.SRQTypeXRC.Short()), "an XRC SRQ: in an XRC domain, with a CQ of its own"}}
	case vOFlags:
		out = []Suggestion{{"O_CREAT", "create the domain if the file has none"}, {"O_CREAT|O_EXCL", "create it; fail if the file has one"}, {"0", "open the file's domain; fail if it has none"}}
	case vOnOff:
		names([]string{"on", "off"}, "")
	case vAccess:
		for _, n := range verbs.AccessNames() {
			a, _ := verbs.ParseAccess(n)
			out = append(out, Suggestion{pick(long, a.String(), n), firstSentence(accessText[a])})
		}
	case vSendFlags:
		for _, n := range verbs.SendFlagNames() {
			f, _ := verbs.ParseSendFlags(n)
			out = append(out, Suggestion{pick(long, f.String(), n), firstSentence(sendFlagText[f])})
		}
	case vWROpcode:
		for _, n := range verbs.WROpcodeNames() {
			op, _ := verbs.ParseWROpcode(n)
			if op > verbs.WRAtomicFetchAndAdd {
				continue
			}
			out = append(out, Suggestion{pick(long, op.String(), n), firstSentence(wrOpcodeText[op])})
		}
	case vMTU:
		names(verbs.MTUNames(), "path MTU in bytes")
	case vMigState:
		names([]string{"migrated", "rearm", "armed"}, "path migration state")
	case vBool:
		names([]string{"1", "0"}, "")
	case vDelivery:
		out = []Suggestion{{"auto", "deliver packets right after each verb"}, {"step", "hold packets until step, run or advance"}}
	case vTrace:
		out = []Suggestion{{"on", "print packets after each command"}, {"off", "stop tracing"}, {"pcap", "also write a pcap file"},
			{"ladder", "draw the packets as a ladder diagram"}}
	case vCommand:
		for _, c := range s.cmds {
			out = append(out, Suggestion{c.Name, c.Summary})
		}
	case vFaultAction:
		names(verbs.FaultActionNames(), "fault action")
	default:
		if sp.def != "" && !strings.ContainsAny(sp.def, " ,") && sp.def != "-" {
			out = append(out, Suggestion{sp.def, "default: " + sp.help})
		}
	}
	if sp.value == vAccess || sp.value == vSendFlags {
		out = notGiven(out, typed)
	}
	return filter(out, frag)
}

// handleKinds are the kinds of handle a value of each kind may name.
var handleKinds = map[valueKind][]kind{
	vCtx: {kCtx}, vPD: {kPD}, vMR: {kMR}, vRemote: {kMR}, vAddr: {kMR}, vRKey: {kMR}, vSGE: {kMR},
	vChan: {kChan}, vCQ: {kCQ}, vSRQ: {kSRQ}, vSRQN: {kSRQ}, vQP: {kQP}, vQPN: {kQP}, vAH: {kAH},
	vXRCD: {kXRCD}, vPDOrCtx: {kPD, kCtx},
}

// notGiven drops from a list of flags those typed already before the last
// comma of typed.
func notGiven(out []Suggestion, typed string) []Suggestion {
	i := strings.LastIndexByte(typed, ',')
	if i < 0 {
		return out
	}
	given := map[string]bool{}
	for _, it := range strings.Split(strings.ToLower(typed[:i]), ",") {
		given[it] = true
	}
	var keep []Suggestion
	for _, sg := range out {
		if !given[strings.ToLower(sg.Text)] {
			keep = append(keep, sg)
		}
	}
	return keep
}

// qpTypeText describes each QP type in a few words, for completion.
var qpTypeText = map[verbs.QPType]string{
	verbs.QPTypeRC: "reliable connection", verbs.QPTypeUC: "unreliable connection", verbs.QPTypeUD: "unreliable datagram",
	verbs.QPTypeXRCSend: "XRC sender: one QP reaches every XRC SRQ of the peer's domain",
	verbs.QPTypeXRCRecv: "XRC receiver, in an XRC domain: hands each message to the SRQ the sender names",
}

func pick(long bool, l, s string) string {
	if long {
		return l
	}
	return s
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

func (s *Shell) deviceSuggestions(out *[]Suggestion) {
	for _, d := range s.devs {
		*out = append(*out, Suggestion{d.Name(), "device"})
	}
	if len(s.devs) > 0 {
		b := s.devs[0].Name()
		if len(s.devs) > 1 {
			b = s.devs[1].Name()
		}
		*out = append(*out, Suggestion{"A", "first device: " + s.devs[0].Name()}, Suggestion{"B", "second device: " + b})
	}
}

// stateSuggestions lists QP states, the legal next ones first when the QP
// is known.
func (s *Shell) stateSuggestions(done []token, long bool) []Suggestion {
	var qp *object
	if len(done) > 0 {
		if o, ok := s.h.byName[strings.ToLower(done[0].text)]; ok && o.kind == kQP {
			qp = o
		}
	}
	var out, rest []Suggestion
	legal := map[verbs.QPState]bool{}
	var cur verbs.QPState
	if qp != nil {
		if a, _, err := qp.qp.Query(verbs.AttrState); err == nil {
			cur = a.State
			for _, n := range verbs.NextStates(qp.qpType, cur) {
				legal[n] = true
			}
		}
	}
	for st := verbs.QPSReset; st <= verbs.QPSErr; st++ {
		sg := Suggestion{pick(long, st.String(), st.Short()), firstSentence(stateText[st])}
		if legal[st] {
			sg.Description = "legal from " + cur.Short() + ": " + sg.Description
			out = append(out, sg)
		} else {
			rest = append(rest, sg)
		}
	}
	return append(out, rest...)
}

func (s *Shell) handleDesc(o *object) string {
	d := o.kind.String()
	if sum := s.summary(o); sum != "" {
		d += ": " + sum
	}
	return d
}

// filter keeps the suggestions that start with word, case-insensitively,
// in their order.
func filter(in []Suggestion, word string) []Suggestion {
	var out []Suggestion
	w := strings.ToLower(word)
	seen := map[string]bool{}
	for _, s := range in {
		if strings.HasPrefix(strings.ToLower(s.Text), w) && !seen[s.Text] {
			seen[s.Text] = true
			out = append(out, s)
		}
	}
	return out
}

// Completers of the commands that read their own words.

func completeHandles(s *Shell, done []token, word string) []Suggestion {
	var out []Suggestion
	for _, o := range s.h.all() {
		out = append(out, Suggestion{o.name, s.handleDesc(o)})
	}
	return filter(out, word)
}

func completeWatched(s *Shell, done []token, word string) []Suggestion {
	var out []Suggestion
	for _, name := range s.watched {
		if o, ok := s.h.byName[name]; ok {
			out = append(out, Suggestion{o.name, s.handleDesc(o)})
		}
	}
	out = append(out, Suggestion{"all", "every watched object"})
	return filter(out, word)
}

func completeExplain(s *Shell, done []token, word string) []Suggestion {
	if len(done) > 0 {
		return nil
	}
	return filter(explainTopics(), word)
}

func completeFault(s *Shell, done []token, word string) []Suggestion {
	if len(done) == 0 {
		out := []Suggestion{{"list", "list the fault rules"}, {"clear", "remove every rule"}, {"del", "remove one rule by id"}}
		for _, a := range verbs.FaultActionNames() {
			out = append(out, Suggestion{a, "add a rule that does " + a + " to matching packets"})
		}
		return filter(out, word)
	}
	if _, err := verbs.ParseFaultAction(strings.ToLower(done[0].text)); err != nil {
		return nil
	}
	return s.completeArgs(faultRule, done, word)
}

func completeRepeat(s *Shell, done []token, word string) []Suggestion {
	if len(done) == 0 {
		return nil
	}
	var parts []string
	for _, t := range done[1:] {
		parts = append(parts, quoteIfNeeded(t))
	}
	parts = append(parts, word)
	return s.Complete(strings.Join(parts, " "))
}

func quoteIfNeeded(t token) string {
	if t.eq >= 0 {
		return t.text[:t.eq+1] + quote(t.text[t.eq+1:])
	}
	return quote(t.text)
}
