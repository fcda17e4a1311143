package shell

import (
	"fmt"
	"strconv"
	"time"

	"github.com/vsh-rdma/vsh/pingpong"
	"github.com/vsh-rdma/vsh/pingpong/exchange"
	"github.com/vsh-rdma/vsh/verbs"
)

// The commands that show, by hand, what rdma-core's ping-pong programs do
// out of band: the address each side sends the other over TCP, and the
// result lines they print. The lessons on the ping-pongs use them.

func ppDestCmd() *command {
	return &command{Name: "pp_dest", Group: gQP, Usage: "pp_dest QP [psn=0] [gid_index=N] [port=1]",
		Summary: "Show the 52-byte address message rdma-core's ping-pongs exchange over TCP for a QP (LID, QPN, PSN, GID)",
		Help: "The ping-pongs (ibv_rc_pingpong and its siblings) tell each other where they are before the QPs can connect: " +
			"pp_client_exch_dest writes sprintf(\"%04x:%06x:%06x:%s\", lid, qpn, psn, gid) — 51 characters and a NUL — to a TCP " +
			"socket, and the peer reads them back with sscanf. pp_dest prints that message for a QP: its LID (0 on RoCE), its QP " +
			"number, the PSN you choose (the programs draw one at random) and the GID at gid_index (-g), all zeros without it. " +
			"The peer's values are what modify_qp needs for RTR: dest_qpn, rq_psn and dgid.",
		Args: []argSpec{argQP,
			key("psn", vNum, "0", "the start PSN this side announces (24 bits)", "sq_psn"),
			key("gid_index", vNum, "none", "the local GID index (-g); without it the GID is zero, as without -g", "sgid_index"),
			key("port", vNum, "1", "the port (-i)", "port_num")},
		run: cmdPPDest}
}

func cmdPPDest(c *call) error {
	o, err := c.obj(0, kQP)
	if err != nil {
		return err
	}
	psn, err := c.num("psn", 24)
	if err != nil {
		return err
	}
	port, err := c.u8("port")
	if err != nil {
		return err
	}
	ctx := ctxOf(o) // not o.qp.PD(): an XRC_RECV QP has none
	pa, err := ctx.QueryPort(port)
	if err != nil {
		return err
	}
	calls := []VerbCall{{Name: "ibv_query_port", Args: fmt.Sprintf("%s, %d", ctxName(c.s, o), port)}}
	d := exchange.Dest{LID: pa.LID, QPN: o.qp.Num(), PSN: uint32(psn)}
	if c.has("gid_index") {
		idx, err := c.intOr("gid_index", 0)
		if err != nil {
			return err
		}
		g, err := ctx.QueryGID(port, idx)
		if err != nil {
			return err
		}
		d.GID = g
		calls = append(calls, VerbCall{Name: "ibv_query_gid", Args: fmt.Sprintf("%s, %d, %d", ctxName(c.s, o), port, idx)})
	}
	c.verbs(calls...)
	c.line("%s", pingpong.LocalLine(transportOf(o.qp.Type()), d))
	msg := d.Marshal()
	c.line("the %d bytes pp_client_exch_dest writes to the TCP socket: sprintf(\"%%04x:%%06x:%%06x:%%s\") and the NUL:", len(msg))
	c.line("%s", strconv.Quote(string(msg[:])))
	c.out.add(hexdump(msg[:], 0))
	if d.GID.IsZero() {
		c.line("no gid_index: the GID is all zeros, as without -g; the peer then builds no GRH, which RoCE requires (gid_index=1 is -g 1)")
	}
	return nil
}

func ctxName(s *Shell, o *object) string {
	for p := o.parent; p != nil; p = p.parent {
		if p.kind == kCtx {
			return p.name
		}
	}
	return "ctx"
}

func transportOf(t verbs.QPType) pingpong.Transport {
	switch t {
	case verbs.QPTypeUC:
		return pingpong.UC
	case verbs.QPTypeUD:
		return pingpong.UD
	}
	return pingpong.RC
}

func ppStatsCmd() *command {
	return &command{Name: "pp_stats", Group: gSession, Usage: "pp_stats start | pp_stats size=N iters=N",
		Summary: "Time a ping-pong loop and print rdma-core's two result lines (bytes, Mbit/sec, usec/iter)",
		Help: "pp_stats start starts the clock, as the programs call gettimeofday before their loop; pp_stats size=4096 iters=1000 " +
			"then prints the lines they print after it: size × iters × 2 bytes (every iteration moves a message each way) " +
			"in the time since start, in Mbit/sec and in µs per iteration. On the simulator the clock is the fabric's virtual " +
			"time, so the figures are the same at every run; on real hardware it is the wall clock.",
		Args: []argSpec{flag("start", "start the clock"),
			key("size", vSize, "4096", "the message size (-s)"), key("iters", vNum, "1000", "the iterations (-n)")},
		run: cmdPPStats}
}

func (s *Shell) ppClock() (time.Duration, string) {
	if st, ok := s.prov.(verbs.Stepper); ok {
		return st.Now(), "virtual time"
	}
	return time.Since(processStart), "wall clock"
}

var processStart = time.Now()

func cmdPPStats(c *call) error {
	st := c.s.lessonState()
	now, clock := c.s.ppClock()
	if c.a.flags["start"] {
		if c.has("size") || c.has("iters") {
			return usagef(c.cmd.usageHint(), "pp_stats start takes nothing else; give size= and iters= after the loop")
		}
		st.ppStart, st.ppStarted = now, true
		c.line("the clock starts at %v (%s), as the programs' gettimeofday before the loop", now, clock)
		return nil
	}
	if !st.ppStarted {
		return usagef("pp_stats start first, before the loop", "the clock was not started")
	}
	size, err := c.size("size")
	if err != nil {
		return err
	}
	iters, err := c.count("iters", 1<<30)
	if err != nil {
		return err
	}
	if iters == 0 || size == 0 {
		return usagef("size=4096 iters=10", "size and iters must be more than 0")
	}
	s := pingpong.Stats{Size: int(size), Iters: iters, Elapsed: now - st.ppStart}
	for _, l := range s.Lines() {
		c.line("%s", l)
	}
	c.line("(%v of %s since pp_stats start; bytes = %d × %d × 2)", now-st.ppStart, clock, size, iters)
	return nil
}
