package shell

import (
	"fmt"
	"strings"

	"github.com/vsh-rdma/vsh/verbs"
)

// maxBatch is the most WRs one post command builds.
const maxBatch = 4096

// recvWRs builds the receive work requests of post_recv and post_srq_recv.
func recvWRs(c *call) ([]verbs.RecvWR, []string, error) {
	sges, desc, err := c.sges(nil)
	if err != nil {
		return nil, nil, err
	}
	n, err := c.countOr("count", 1, maxBatch)
	if err != nil {
		return nil, nil, err
	}
	if n == 0 {
		return nil, nil, usagef("count=1 or more", "count=0 posts nothing")
	}
	first, given, err := wrID(c)
	if err != nil {
		return nil, nil, err
	}
	wrs := make([]verbs.RecvWR, n)
	lines := make([]string, n)
	for i := range wrs {
		id := first + uint64(i)
		if !given && i > 0 {
			id = c.s.nextWRID()
		}
		wrs[i] = verbs.RecvWR{WRID: id, SGList: sges}
		lines[i] = fmt.Sprintf("wr_id %d: sg_list %s", id, desc)
	}
	return wrs, lines, nil
}

// wrID returns the first wr_id: the one given, or the session's next.
func wrID(c *call) (uint64, bool, error) {
	if c.has("wr_id") {
		n, err := c.numOr("wr_id", 0, 64)
		return n, true, err
	}
	return c.s.nextWRID(), false, nil
}

func postRecvCmd() *command {
	return &command{Name: "post_recv", Aliases: []string{"recv"}, Group: gData,
		Usage:   "post_recv QP mr=MR [offset=0] [length=N] [wr_id=N] [count=N] | post_recv QP sge=MR:OFF:LEN,... [wr_id=N] [count=N]",
		Summary: "Post receive work requests (ibv_post_recv)",
		Help: "A receive WR names where an incoming SEND (or the immediate of a WRITE with immediate) lands. " +
			"Receives may be posted from INIT on; a SEND that finds no receive is answered with an RNR NAK. " +
			"On a UD QP the first 40 bytes receive the GRH.",
		Args: recvArgs(argQP), run: cmdPostRecv}
}

func cmdPostRecv(c *call) error {
	o, err := c.obj(0, kQP)
	if err != nil {
		return err
	}
	wrs, lines, err := recvWRs(c)
	if err != nil {
		return err
	}
	n, err := o.qp.PostRecv(wrs)
	postResult(c, "ibv_post_recv", o, wrs, n, err, lines)
	o.recvs += min(n, len(wrs))
	c.recordRecvs(o, wrs[:min(n, len(wrs))])
	return err
}

func postSRQRecvCmd() *command {
	return &command{Name: "post_srq_recv", Group: gData,
		Usage:   "post_srq_recv SRQ mr=MR [offset=0] [length=N] [wr_id=N] [count=N] | post_srq_recv SRQ sge=... [wr_id=N] [count=N]",
		Summary: "Post receive work requests to a shared receive queue (ibv_post_srq_recv)",
		Args:    recvArgs(argSRQ), run: cmdPostSRQRecv}
}

func cmdPostSRQRecv(c *call) error {
	o, err := c.obj(0, kSRQ)
	if err != nil {
		return err
	}
	wrs, lines, err := recvWRs(c)
	if err != nil {
		return err
	}
	n, err := o.srq.PostRecv(wrs)
	postResult(c, "ibv_post_srq_recv", o, wrs, n, err, lines)
	o.recvs += min(n, len(wrs))
	c.recordRecvs(o, wrs[:min(n, len(wrs))])
	return err
}

// postResult prints a post verb's call, what it posted and, on failure,
// which WR was refused (bad_wr).
func postResult[W any](c *call, verb string, o *object, wrs []W, n int, err error, lines []string) {
	if err == nil {
		c.verbs(postCall(c, verb, o, len(wrs), "= 0"))
		for _, l := range lines {
			c.line("%s", l)
		}
		return
	}
	name := verbs.ErrnoName(verbs.ErrnoOf(err))
	if n >= len(wrs) {
		c.verbs(postCall(c, verb, o, len(wrs), "= "+name))
		for _, l := range lines {
			c.line("%s  (queued all the same)", l)
		}
		return
	}
	c.verbs(postCall(c, verb, o, len(wrs), fmt.Sprintf("= %s, bad_wr = WR #%d", name, n+1)))
	for i, l := range lines {
		switch {
		case i < n:
			c.line("%s  (posted)", l)
		case i == n:
			c.line("%s  (refused)", l)
		}
	}
	if n+1 < len(lines) {
		c.line("the %d WR%s after it were not posted", len(lines)-n-1, plural(len(lines)-n-1))
	}
}

func postSendCmd() *command {
	return &command{Name: "post_send", Aliases: []string{"send"}, Group: gData,
		Usage: "post_send QP [opcode=send] mr=MR [offset=0] [length=N] | sge=...  [wr_id=N] [flags=signaled] [imm=N] " +
			"[remote=MR[+OFF] | remote_addr=A rkey=K] [ah=AH remote_qpn=QPN remote_qkey=K] [remote_srqn=SRQN] [compare=N swap=N add=N] [count=N]",
		Summary: "Post a send work request (ibv_post_send): send, RDMA write/read, atomics",
		Help: "opcode= is send, send_with_imm, rdma_write, rdma_write_with_imm, rdma_read, atomic_cmp_and_swp or " +
			"atomic_fetch_and_add (or IBV_WR_... names). flags= defaults to signaled (a CQE when it completes); " +
			"flags=0 posts it unsignaled. RDMA and atomics need the remote buffer: remote=mr1+100 takes its address and rkey " +
			"from a handle. Atomics work on 8 bytes (length defaults to 8). UD sends need ah=, remote_qpn= and remote_qkey= " +
			"(default 0x11111111). An XRC_SEND QP's sends need remote_srqn=: the number of the peer's XRC SRQ that takes them " +
			"(get_srq_num tells it; an SRQ handle stands for its number). Sends may be posted in RTS only.",
		Args: []argSpec{argQP,
			key("opcode", vWROpcode, "send", "the operation"),
			key("mr", vMR, "", "the local buffer's MR (one SGE)"),
			key("offset", vSize, "0", "where the local buffer starts in the MR"),
			key("length", vSize, "rest of the MR (8 for atomics)", "the local buffer's length", "len"),
			key("sge", vSGE, "", "a list of SGEs instead of mr=: mr0:0:64,mr1:0:32"),
			key("wr_id", vNum, "next number", "the work request's id"),
			key("flags", vSendFlags, "signaled", "send flags: signaled, solicited, inline, fence (0 for none)", "send_flags"),
			key("imm", vNum, "", "immediate data, for the *_with_imm opcodes", "imm_data"),
			key("remote", vRemote, "", "the remote buffer as a handle: mr1 or mr1+OFFSET"),
			key("remote_addr", vAddr, "", "the remote address (a number, or mr1+OFFSET)"),
			key("rkey", vRKey, "", "the remote key (a number, or mr1)"),
			key("ah", vAH, "", "UD: the address handle"),
			key("remote_qpn", vQPN, "", "UD: the destination QP (qp1 or a number)"),
			key("remote_qkey", vNum, "0x11111111", "UD: the destination Q_Key"),
			key("remote_srqn", vSRQN, "", "XRC_SEND: the peer's XRC SRQ (srq1, or its number from get_srq_num)", "srqn", "xrc_remote_srq_num"),
			key("compare", vNum, "0", "atomic_cmp_and_swp: the value to compare", "compare_add"),
			key("swap", vNum, "0", "atomic_cmp_and_swp: the value to write"),
			key("add", vNum, "", "atomic_fetch_and_add: the value to add"),
			key("count", vNum, "1", "post this many WRs in one call, wr_id counting up")},
		run: cmdPostSend}
}

func cmdPostSend(c *call) error {
	o, err := c.obj(0, kQP)
	if err != nil {
		return err
	}
	wr, desc, notes, err := sendTemplate(c, o)
	if err != nil {
		return err
	}
	n, err := c.count("count", maxBatch)
	if err != nil {
		return err
	}
	if n == 0 {
		return usagef("count=1 or more", "count=0 posts nothing")
	}
	first, idGiven, err := wrID(c)
	if err != nil {
		return err
	}
	wrs := make([]verbs.SendWR, n)
	lines := make([]string, n)
	for i := range wrs {
		w := wr
		w.WRID = first + uint64(i)
		if !idGiven && i > 0 {
			w.WRID = c.s.nextWRID()
		}
		wrs[i] = w
		lines[i] = describeSendWR(c.s, o, w, desc, c.raw("remote_qpn"))
	}
	posted, err := o.qp.PostSend(wrs)
	postResult(c, "ibv_post_send", o, wrs, posted, err, lines)
	for _, w := range wrs[:min(posted, len(wrs))] {
		o.sent = append(o.sent, w.WRID)
	}
	c.recordSends(o, wrs[:min(posted, len(wrs))])
	for _, note := range notes {
		c.line("note: %s", note)
	}
	return err
}

// sendTemplate reads post_send's arguments into the work request that
// count= repeats, the description of its SGEs, and notes on arguments its
// opcode ignores.
func sendTemplate(c *call, o *object) (verbs.SendWR, string, []string, error) {
	var err error
	op := verbs.WRSend
	if c.has("opcode") {
		if op, err = verbs.ParseWROpcode(c.raw("opcode")); err != nil {
			return verbs.SendWR{}, "", nil, c.bad("opcode", err)
		}
	}
	var defLen func(uint64) uint64
	if op.IsAtomic() {
		defLen = func(uint64) uint64 { return 8 }
	}
	sges, desc, err := c.sges(defLen)
	if err != nil {
		return verbs.SendWR{}, "", nil, err
	}
	flags := verbs.SendSignaled
	if c.has("flags") {
		if flags, err = verbs.ParseSendFlags(c.raw("flags")); err != nil {
			return verbs.SendWR{}, "", nil, c.bad("flags", err)
		}
	}
	wr := verbs.SendWR{Opcode: op, Flags: flags, SGList: sges}
	var notes []string
	if c.has("imm") {
		if wr.Imm, err = c.u32("imm"); err != nil {
			return verbs.SendWR{}, "", nil, err
		}
		if !op.HasImm() {
			notes = append(notes, fmt.Sprintf("imm= is ignored by %s; the *_with_imm opcodes carry it", op))
		}
	}
	addr, rkey, given, err := c.remote()
	if err != nil {
		return verbs.SendWR{}, "", nil, err
	}
	wr.RemoteAddr, wr.RKey = addr, rkey
	if op.IsRDMA() && !given {
		notes = append(notes, "no remote buffer given (remote=mr1+OFFSET): remote_addr 0 and rkey 0, which the responder will refuse")
	}
	if given && !op.IsRDMA() {
		notes = append(notes, fmt.Sprintf("the remote buffer is ignored by %s", op))
	}
	if err := atomicOperands(c, &wr, &notes); err != nil {
		return verbs.SendWR{}, "", nil, err
	}
	ah, hasAH, err := c.keyObj("ah", kAH)
	if err != nil {
		return verbs.SendWR{}, "", nil, err
	}
	if hasAH {
		wr.AH = ah.ah
	}
	if o.qpType == verbs.QPTypeUD && !hasAH {
		return verbs.SendWR{}, "", nil, usagef("post_send "+o.name+" mr=mr0 length=64 ah=ah0 remote_qpn=qp1 (create_ah makes ah0)",
			"a UD send needs ah= (where to) and remote_qpn=")
	}
	qpn, hasQPN, err := c.qpn("remote_qpn")
	if err != nil {
		return verbs.SendWR{}, "", nil, err
	}
	wr.RemoteQPN = qpn
	if wr.RemoteQKey, err = c.u32("remote_qkey"); err != nil {
		return verbs.SendWR{}, "", nil, err
	}
	if o.qpType == verbs.QPTypeUD && !hasQPN {
		return verbs.SendWR{}, "", nil, usagef("add remote_qpn=qp1 (or its number)", "a UD send needs remote_qpn=")
	}
	if o.qpType == verbs.QPTypeUD && hasAH && ah.ah.Attr().IsGlobal && !ah.ah.Attr().GRH.DGID.IsMulticast() {
		if note := c.qpnNote("remote_qpn", qpn, ah.ah.Attr().GRH.DGID, ah.name+" sends to", "the datagram goes"); note != "" {
			notes = append(notes, note)
		}
	}
	srqn, hasSRQN, err := c.remoteSRQN() // cmd_xrc.go
	if err != nil {
		return verbs.SendWR{}, "", nil, err
	}
	wr.RemoteSRQN = srqn
	switch {
	case o.qpType == verbs.QPTypeXRCSend && !hasSRQN:
		return verbs.SendWR{}, "", nil, usagef("add remote_srqn=: the peer's XRC SRQ, as get_srq_num SRQ prints it (or its handle)",
			"an XRC send needs remote_srqn=: the XRC SRQ of the peer's domain that takes it")
	case hasSRQN && o.qpType != verbs.QPTypeXRCSend:
		notes = append(notes, fmt.Sprintf("remote_srqn= is ignored by %s; only an XRC_SEND QP names the SRQ that takes its sends", aQP(o.qpType)))
	}
	return wr, desc, notes, nil
}

// atomicOperands reads an atomic's compare=, swap= or add=, and notes them
// as ignored by other opcodes.
func atomicOperands(c *call, wr *verbs.SendWR, notes *[]string) error {
	var err error
	switch op := wr.Opcode; op {
	case verbs.WRAtomicCmpAndSwp:
		if wr.CompareAdd, err = c.num("compare", 64); err != nil {
			return err
		}
		if wr.Swap, err = c.num("swap", 64); err != nil {
			return err
		}
	case verbs.WRAtomicFetchAndAdd:
		if c.has("add") && c.has("compare") {
			return usagef("fetch_and_add takes add=", "add= and compare= both given")
		}
		key := "add"
		if !c.has("add") {
			key = "compare"
		}
		if wr.CompareAdd, err = c.num(key, 64); err != nil {
			return err
		}
	default:
		for _, k := range []string{"compare", "swap", "add"} {
			if c.has(k) {
				*notes = append(*notes, fmt.Sprintf("%s= is ignored by %s; it is for atomics", k, op))
			}
		}
	}
	return nil
}

func describeSendWR(s *Shell, o *object, w verbs.SendWR, sge, qpnArg string) string {
	d := fmt.Sprintf("wr_id %d: %s sg_list %s send_flags %s", w.WRID, w.Opcode, sge, w.Flags)
	if w.Opcode.HasImm() {
		d += fmt.Sprintf(" imm_data 0x%x", w.Imm)
	}
	if w.Opcode.IsRDMA() {
		d += fmt.Sprintf(" remote_addr 0x%x rkey 0x%x", w.RemoteAddr, w.RKey)
	}
	switch w.Opcode {
	case verbs.WRAtomicCmpAndSwp:
		d += fmt.Sprintf(" compare_add %d swap %d", w.CompareAdd, w.Swap)
	case verbs.WRAtomicFetchAndAdd:
		d += fmt.Sprintf(" compare_add %d", w.CompareAdd)
	}
	if o.qpType == verbs.QPTypeUD {
		qpn := hex24(w.RemoteQPN)
		if w.AH != nil && w.AH.Attr().IsGlobal && !w.AH.Attr().GRH.DGID.IsMulticast() {
			// The QP the number reaches: the one on the AH's device.
			if q := s.qpAtGID(w.RemoteQPN, w.AH.Attr().GRH.DGID); q != nil {
				qpn += " (" + q.name + ")"
			}
		} else if k, ok := kindOfName(qpnArg); ok && k == kQP {
			qpn += " (" + strings.ToLower(qpnArg) + ")"
		}
		d += fmt.Sprintf(" remote_qpn %s remote_qkey 0x%x", qpn, w.RemoteQKey)
	}
	if o.qpType == verbs.QPTypeXRCSend {
		d += " remote_srqn " + s.srqName(w.RemoteSRQN)
	}
	return d
}

// postCall is the call of a post verb that carried n work requests.
func postCall(c *call, verb string, o *object, n int, result string) VerbCall {
	return VerbCall{Name: verb, Args: fmt.Sprintf("%s, %d WR%s", c.s.hn(o), n, plural(n)), Result: result, WRs: n}
}
