package shell

import (
	"sort"
	"strconv"
	"strings"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/verbs"
)

// What a cell did, as data: the commands it ran with the arguments that
// name things, and the work requests it posted. The lesson tutor's judge
// reads them (lessons.Record); nothing here is printed.

// lookCommands are the commands whose effect no snapshot of the objects
// shows: they read, print or time something (query_port, mem, pp_dest), or
// change what the fabric does rather than an object (trace, fault). A
// lesson cell that runs one asks the learner to run it too.
var lookCommands = map[string]bool{
	"devices": true, "devinfo": true, "query_device": true, "query_port": true, "query_gid": true,
	"async_events": true, "mem": true, "get_cq_event": true, "query_qp": true, "query_srq": true,
	"show": true, "watch": true, "unwatch": true, "backend": true, "fabric": true, "trace": true,
	"fault": true, "help": true, "explain": true, "history": true, "pp_dest": true, "pp_stats": true,
	"pingpong": true, "bench": true, "paths": true, "exchange": true,
}

// recordCall adds the command a call runs to its cell's log of calls,
// while the session keeps fewer than MaxLogCalls.
func (s *Shell) recordCall(c *Cell, cmd *command, a *args) {
	if s.calls.room(1, MaxLogCalls, func(i int) int { n := len(s.log[i].calls); s.log[i].calls = nil; return n }) == 1 {
		c.calls = append(c.calls, lessons.Call{Cmd: cmd.Name, Args: s.callArgs(cmd, a), Look: lookCommands[cmd.Name]})
	}
}

// callArgs are the arguments of a call that name something — handles,
// devices (as dev0, dev1: their place in the device list) and words —
// normalized; numbers, sizes and durations are left out.
func (s *Shell) callArgs(cmd *command, a *args) (out []lessons.Arg) {
	if cmd.rawArgs {
		for _, t := range a.pos {
			k, v := "", t.text
			if t.eq >= 0 {
				k, v = strings.ToLower(t.text[:t.eq]), t.text[t.eq+1:]
			}
			if arg, ok := s.wordArg(k, v); ok {
				out = append(out, arg)
			}
		}
		return out
	}
	if cmd.settings != nil {
		defer func() { out = s.experimentArgs(cmd, a, out) }()
	}
	posSpecs := cmd.positionals()
	for i, t := range a.pos {
		vk := vText
		if i < len(posSpecs) {
			vk = posSpecs[i].value
		}
		if arg, ok := s.typedArg("", vk, t.text); ok {
			out = append(out, arg)
		}
	}
	for _, k := range a.keys {
		sp := cmd.findSpec(k, keyArg)
		if sp == nil {
			continue
		}
		if sp.canon != nil {
			out = append(out, lessons.Arg{Key: k, Kind: lessons.ArgWord, Value: sp.canon(a.kv[k])})
			continue
		}
		if sp.value == vBool {
			continue // a switch of how it shows (chart=off), or a number-like yes
		}
		if sp.value == vNum || sp.value == vSize {
			if n, err := parseSize(a.kv[k]); err == nil {
				out = append(out, lessons.Arg{Key: k, Kind: lessons.ArgNumber, Value: strconv.FormatUint(n, 10)})
			}
			continue
		}
		if arg, ok := s.typedArg(k, sp.value, a.kv[k]); ok {
			out = append(out, arg)
		}
	}
	var flags []string
	for f, on := range a.flags {
		if on {
			flags = append(flags, f)
		}
	}
	sort.Strings(flags)
	for _, f := range flags {
		out = append(out, lessons.Arg{Key: "flag", Kind: lessons.ArgWord, Value: f})
	}
	return out
}

// experimentArgs gives an experiment's call every setting it runs with
// (command.settings), so that leaving a setting out is comparing its
// default.
func (s *Shell) experimentArgs(cmd *command, a *args, out []lessons.Arg) []lessons.Arg {
	set := cmd.settings(&call{s: s, cmd: cmd, a: a, out: &output{}})
	if set == nil {
		return out // the command refuses its arguments
	}
	keys := map[string]bool{}
	for _, x := range set {
		keys[x.Key] = true
	}
	kept := out[:0]
	for _, x := range out {
		if x.Kind != lessons.ArgNumber && !keys[x.Key] {
			kept = append(kept, x)
		}
	}
	return append(kept, set...)
}

// numArg is a setting as a lesson's judge compares it.
func numArg(key string, n int64) lessons.Arg {
	return lessons.Arg{Key: key, Kind: lessons.ArgNumber, Value: strconv.FormatInt(n, 10)}
}

// typedArg normalizes a value of a known kind.
func (s *Shell) typedArg(key string, vk valueKind, v string) (lessons.Arg, bool) {
	switch vk {
	case vNum, vSize, vDuration, vFile:
		return lessons.Arg{}, false
	case vCtx, vPD, vMR, vChan, vCQ, vSRQ, vQP, vAH, vXRCD, vPDOrCtx, vAnyHandle:
		return lessons.Arg{Key: key, Kind: lessons.ArgHandle, Value: strings.ToLower(v)}, true
	case vDevice:
		return s.deviceArg(key, v), true
	case vQPN, vSRQN, vGID, vRemote, vAddr, vRKey:
		h := strings.ToLower(strings.SplitN(v, "+", 2)[0])
		if _, ok := kindOfName(h); ok {
			return lessons.Arg{Key: key, Kind: lessons.ArgHandle, Value: h}, true
		}
		if vk == vGID {
			if _, err := s.device(v); err == nil {
				return s.deviceArg(key, v), true
			}
		}
		return lessons.Arg{}, false
	case vSGE:
		h := strings.ToLower(strings.SplitN(v, ":", 2)[0])
		return lessons.Arg{Key: key, Kind: lessons.ArgHandle, Value: h}, true
	}
	if c := canonicalWord(vk, v); c != "" {
		return lessons.Arg{Key: key, Kind: lessons.ArgWord, Value: c}, true
	}
	return s.wordArg(key, v)
}

// canonicalWord writes an enum or flags the one way: 1024 for
// IBV_MTU_1024, rts for IBV_QPS_RTS, local_write,remote_write for
// IBV_ACCESS_REMOTE_WRITE|IBV_ACCESS_LOCAL_WRITE; "" when v does not parse.
func canonicalWord(vk valueKind, v string) string {
	var c interface{ Short() string }
	var err error
	switch vk {
	case vMTU:
		c, err = verbs.ParseMTU(v)
	case vState:
		c, err = verbs.ParseQPState(v)
	case vQPType, vQPTypeEx:
		c, err = verbs.ParseQPType(v)
	case vSRQType:
		c, err = verbs.ParseSRQType(v)
	case vWROpcode:
		c, err = verbs.ParseWROpcode(v)
	case vAccess:
		c, err = verbs.ParseAccess(v)
	case vSendFlags:
		c, err = verbs.ParseSendFlags(v)
	default:
		return ""
	}
	if err != nil {
		return ""
	}
	return strings.ToLower(c.Short())
}

// wordArg normalizes a word of a command whose arguments are not typed.
func (s *Shell) wordArg(key, v string) (lessons.Arg, bool) {
	low := strings.ToLower(v)
	if _, ok := kindOfName(low); ok {
		return lessons.Arg{Key: key, Kind: lessons.ArgHandle, Value: low}, true
	}
	if v == "A" || v == "B" || v == "a" || v == "b" {
		return s.deviceArg(key, v), true
	}
	if _, err := parseSize(v); err == nil {
		return lessons.Arg{}, false
	}
	if _, err := parseDuration(v); err == nil {
		return lessons.Arg{}, false
	}
	for _, p := range []string{"ibv_wc_", "ibv_qps_", "ibv_qpt_", "ibv_wr_", "ibv_access_", "ibv_event_", "ibv_"} {
		if strings.HasPrefix(low, p) && len(low) > len(p) {
			low = low[len(p):]
			break
		}
	}
	return lessons.Arg{Key: key, Kind: lessons.ArgWord, Value: low}, true
}

// deviceArg names a device by its place in the device list: dev0, dev1.
func (s *Shell) deviceArg(key, v string) lessons.Arg {
	if d, err := s.device(v); err == nil {
		for i, x := range s.devs {
			if x == d {
				return lessons.Arg{Key: key, Kind: lessons.ArgDevice, Value: devIndexName(i)}
			}
		}
	}
	return lessons.Arg{Key: key, Kind: lessons.ArgWord, Value: strings.ToLower(v)}
}

func devIndexName(i int) string { return "dev" + strconv.Itoa(i) }

// callIndex is the place in its cell's calls of the call running, as
// recordCall kept it; -1 when the log kept no call for it.
func (c *call) callIndex() int {
	if c.cell == nil {
		return -1
	}
	i := len(c.cell.calls) - 1
	if i < 0 || c.cell.calls[i].Cmd != c.cmd.Name {
		return -1
	}
	return i
}

// noteWrite records, on the call running, the bytes a CPU write wrote.
func (c *call) noteWrite(off, n uint64) {
	if i := c.callIndex(); i >= 0 {
		c.cell.calls[i].Wrote = &lessons.ByteRange{Off: off, Len: n}
	}
}

// recordSends adds the send work requests a verb took to the cell.
func (c *call) recordSends(o *object, wrs []verbs.SendWR) {
	at := c.callIndex()
	for _, w := range wrs[:c.s.roomForPosts(len(wrs))] {
		c.cell.posts = append(c.cell.posts, lessons.Post{Queue: o.name, WR: w, WRIDGiven: c.has("wr_id"), Call: at})
	}
}

// roomForPosts makes room for n more posts in the session's record
// (MaxLogPosts) and returns how many of the n it keeps.
func (s *Shell) roomForPosts(n int) int {
	return s.posts.room(n, MaxLogPosts, func(i int) int { k := len(s.log[i].posts); s.log[i].posts = nil; return k })
}

// keptRecords bounds one kind of record the session's cells keep (posts,
// calls): it counts those kept and lists the log's cells holding some.
type keptRecords struct {
	kept  int
	cells []int // indexes in the log, oldest first
}

// room makes room for n more records, under most in all, dropping those
// of the oldest cells first (drop clears cell i's and says how many it
// held), and returns how many of the n fit.
func (k *keptRecords) room(n, most int, drop func(i int) int) int {
	for k.kept+n > most && len(k.cells) > 0 {
		k.kept -= drop(k.cells[0])
		k.cells = k.cells[1:]
	}
	n = max(0, min(n, most-k.kept))
	k.kept += n
	return n
}

// logged notes that the log's cell i holds n records.
func (k *keptRecords) logged(i, n int) {
	if n > 0 {
		k.cells = append(k.cells, i)
	}
}

// recordRecvs adds the receive work requests a verb took to the cell.
func (c *call) recordRecvs(o *object, wrs []verbs.RecvWR) {
	at := c.callIndex()
	for _, w := range wrs[:c.s.roomForPosts(len(wrs))] {
		c.cell.posts = append(c.cell.posts, lessons.Post{Queue: o.name, Recv: true, WRIDGiven: c.has("wr_id"),
			WR: verbs.SendWR{WRID: w.WRID, SGList: w.SGList}, Call: at})
	}
}
