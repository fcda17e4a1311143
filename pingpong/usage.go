package pingpong

import (
	"fmt"
	"io"
	"strings"
)

// Usage writes the help of t's program (prog is the command name, e.g.
// "pingpong").
func Usage(w io.Writer, prog string, t Transport) {
	if t == XSRQ {
		usageXSRQ(w, prog)
		return
	}
	d := Defaults(t)
	var b strings.Builder
	p := prog + " " + t.String()
	fmt.Fprintf(&b, "Usage:\n")
	fmt.Fprintf(&b, "  %s [options]          be the server: wait for a client\n", p)
	fmt.Fprintf(&b, "  %s [options] <host>   be the client of the server on <host>\n", p)
	fmt.Fprintf(&b, "\nThe same ping-pong as rdma-core's %s, flag- and wire-compatible with it.\n", t.Program())
	fmt.Fprintf(&b, "Options go anywhere on the line; long ones take --opt=V or --opt V, short ones -oV or -o V.\n\n")
	fmt.Fprintf(&b, "Options (the same on both sides, except -d, -i, -g's index and -e):\n")
	row := func(flags, text string) { fmt.Fprintf(&b, "  %-24s %s\n", flags, text) }
	row("-p, --port=<port>", fmt.Sprintf("TCP port of the address exchange (default %d)", d.Port))
	row("-d, --ib-dev=<dev>", "RDMA device to use (default: the first one)")
	row("-i, --ib-port=<port>", fmt.Sprintf("port of the device (default %d)", d.IBPort))
	row("-s, --size=<size>", fmt.Sprintf("message size in bytes (default %d)", d.Size))
	if t != UD {
		row("-m, --mtu=<size>", "path MTU: 256, 512, 1024, 2048 or 4096 (default 1024)")
	}
	if t == SRQ {
		row("-q, --num-qp=<num>", fmt.Sprintf("number of RC QPs sharing the receive queue (default %d)", d.NumQP))
	}
	row("-r, --rx-depth=<dep>", fmt.Sprintf("receives kept posted (default %d)", d.RxDepth))
	if t == SRQ {
		row("-n, --iters=<iters>", fmt.Sprintf("exchanges, counted over all QPs together (default %d)", d.Iters))
	} else {
		row("-n, --iters=<iters>", fmt.Sprintf("exchanges (default %d)", d.Iters))
	}
	row("-l, --sl=<sl>", "service level (default 0)")
	row("-e, --events", "sleep on completion events instead of busy-polling")
	row("-g, --gid-idx=<index>", "local GID index; needed on RoCE (rxe, the simulator): try -g 1")
	row("-c, --chk", "check the received data: every byte of the buffer against the")
	row("", "client's pattern; every bad page is reported and the exit status is 1")
	row("", "(rdma-core checks one byte per page and exits 0 anyway)")
	switch t {
	case RC:
		row("-N, --new_send", "accepted; vsh always posts with ibv_post_send")
		row("-o -O -P -t -j", "rdma-core's ODP, prefetch, timestamp and device-memory modes: refused")
	case SRQ:
		row("-o, --odp", "on-demand paging: refused (rxe and the simulator have none)")
	}
	fmt.Fprintf(&b, "\nvsh's own options:\n")
	row("--backend=sim|ibverbs", "the simulated RNIC or libibverbs (default: ibverbs when built")
	row("", "in and a device exists, else sim)")
	row("--timeout=<duration>", fmt.Sprintf("once connected, give up after this long without progress and say"))
	row("", fmt.Sprintf("what is likely wrong (default %s; 0 waits forever, as rdma-core)", DefaultTimeout))
	row("--sim-addr=<addr>", "the simulator's UDP link: bind this address, port 4791 (a loopback")
	row("", "one, 127.0.0.2, ..., each side its own, default the first free one;")
	row("", "or this host's IPv4 or IPv6 address, to reach kernel rxe on the")
	row("", "same link); its RoCEv2 GID is GID 1. Implies --backend sim")
	row("-h, --help", "this help")
	io.WriteString(w, b.String())
}

// UsageAll writes the help of the command as a whole.
func UsageAll(w io.Writer, prog string) {
	fmt.Fprintf(w, "Usage: %s rc|uc|ud|srq|xsrq [options] [host]\n\n", prog)
	fmt.Fprintf(w, "rdma-core's ping-pong programs (ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong,\n")
	fmt.Fprintf(w, "ibv_srq_pingpong, ibv_xsrq_pingpong), flag- and wire-compatible with them, on real\n")
	fmt.Fprintf(w, "verbs or the simulator.\n")
	fmt.Fprintf(w, "Without <host> it is the server and waits for a client; with it, the client.\n\n")
	fmt.Fprintf(w, "  %s rc --help     the options of one program\n", prog)
	fmt.Fprintf(w, "  %s rc -g 1 -c            # server\n", prog)
	fmt.Fprintf(w, "  %s rc -g 1 -c server     # client\n", prog)
}
