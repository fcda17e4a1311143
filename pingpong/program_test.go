package pingpong

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// checkPair checks a successful run of both sides: exit 0, every line in
// rdma-core's format, each side's remote addresses the other's local ones,
// the byte count size*iters*2, nothing on stderr.
func checkPair(t *testing.T, tr Transport, srv, cli result, size, iters, nqp int) {
	t.Helper()
	if srv.code != 0 || cli.code != 0 {
		t.Fatalf("server: %s\nclient: %s", srv, cli)
	}
	if srv.stderr != "" || cli.stderr != "" {
		t.Errorf("stderr not empty:\nserver: %s\nclient: %s", srv.stderr, cli.stderr)
	}
	s := parseOutput(t, tr, srv.stdout, nqp)
	c := parseOutput(t, tr, cli.stdout, nqp)
	if strings.Join(s.remote, " ") != strings.Join(c.local, " ") || strings.Join(c.remote, " ") != strings.Join(s.local, " ") {
		t.Errorf("addresses do not cross:\nserver local %v remote %v\nclient local %v remote %v", s.local, s.remote, c.local, c.remote)
	}
	for _, p := range []parsed{s, c} {
		if p.bytes != int64(size)*int64(iters)*2 || p.iters != int64(iters) {
			t.Errorf("bytes %d iters %d, want %d and %d", p.bytes, p.iters, size*iters*2, iters)
		}
	}
}

// Every transport, every path MTU, sizes from 1 byte to 64 KiB, with -c,
// server and client as two programs in one process on one simulated
// fabric (sim0 and sim1), talking the real TCP exchange over 127.0.0.1.
// The links carry jumbo frames (9000 bytes, active MTU 4096), as a path
// MTU above 1024 needs on RoCE.
func TestEndToEnd(t *testing.T) {
	requireDataPath(t)
	f := newJumboFabric(t)
	sizes := []int{1, 255, 1024, 4096, 4097, 65536}
	mtus := []int{256, 512, 1024, 2048, 4096}
	for _, tr := range []Transport{RC, UC, SRQ} {
		for _, size := range sizes {
			for _, mtu := range mtus {
				tr, size, mtu := tr, size, mtu
				t.Run(fmt.Sprintf("%s/s%d/m%d", tr, size, mtu), func(t *testing.T) {
					t.Parallel()
					if tr != UC && (size+mtu-1)/mtu > 128 {
						requireLongRCMessages(t)
					}
					iters, nqp := 12, 1
					extra := ""
					if tr == SRQ {
						nqp, extra = 4, " -q 4"
					}
					args := fmt.Sprintf("%s -g 1 -c -s %d -m %d -n %d%s", tr, size, mtu, iters, extra)
					srv, cli := runBoth(t, f, args, args+" -d sim1")
					checkPair(t, tr, srv, cli, size, iters, nqp)
				})
			}
		}
	}
	// UD has no -m: a message is one packet of at most the active MTU.
	for _, size := range []int{1, 100, 1024, 4096} {
		size := size
		t.Run(fmt.Sprintf("ud/s%d", size), func(t *testing.T) {
			t.Parallel()
			args := fmt.Sprintf("ud -g 1 -c -s %d -n 12", size)
			srv, cli := runBoth(t, f, args, args+" -d sim1")
			checkPair(t, UD, srv, cli, size, 12, 1)
		})
	}
}

// On rxe's usual 1500-byte links (active MTU 1024): every path MTU up to
// 1024 between two devices, and every one in loopback, where rxe hands
// packets over without the link.
func TestEndToEndStandardLinks(t *testing.T) {
	requireDataPath(t)
	f := newFabric(t)
	for _, tc := range []struct {
		tr        Transport
		size, mtu int
		loopback  bool
	}{
		{RC, 65536, 1024, false}, {UC, 4097, 512, false}, {SRQ, 3000, 256, false}, {RC, 1, 256, false},
		{RC, 65536, 4096, true}, {UC, 8192, 2048, true}, {SRQ, 4096, 4096, true},
	} {
		tc := tc
		t.Run(fmt.Sprintf("%s/s%d/m%d/loopback=%v", tc.tr, tc.size, tc.mtu, tc.loopback), func(t *testing.T) {
			t.Parallel()
			nqp, extra := 1, ""
			if tc.tr == SRQ {
				nqp, extra = 2, " -q 2"
			}
			args := fmt.Sprintf("%s -g 1 -c -s %d -m %d -n 10%s", tc.tr, tc.size, tc.mtu, extra)
			cli := args
			if !tc.loopback {
				cli += " -d sim1"
			}
			s, c := runBoth(t, f, args, cli)
			if tc.loopback && tc.mtu > 1024 && tc.size > 1024 {
				// Not an error on loopback, but the warning is right for
				// two hosts: clear it before checking the rest.
				s.stderr, c.stderr = dropWarning(t, s.stderr), dropWarning(t, c.stderr)
			}
			checkPair(t, tc.tr, s, c, tc.size, 10, nqp)
		})
	}
	t.Run("ud/s1024", func(t *testing.T) {
		s, c := runBoth(t, f, "ud -g 1 -c", "ud -g 1 -c -d sim1")
		checkPair(t, UD, s, c, 1024, 1000, 1)
	})
}

func dropWarning(t *testing.T, stderr string) string {
	t.Helper()
	if !strings.Contains(stderr, "warning: -m ") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("want one -m warning, got %q", stderr)
		return stderr
	}
	return ""
}

// rdma-core's defaults (-s 4096, -n 1000, srq's 16 QPs), -e, and both
// sides on one device (loopback, as rxe does it).
func TestEndToEndDefaultsEventsLoopback(t *testing.T) {
	requireDataPath(t)
	f := newFabric(t)
	for _, tc := range []struct {
		tr         Transport
		srv, cli   string
		size, nqp  int
		iters      int
		wantEvents bool
	}{
		{RC, "rc -g 1", "rc -g 1 -d sim1", 4096, 1, 1000, false},
		{UC, "uc -g 1 -e", "uc -g 1 -e", 4096, 1, 1000, true},
		{UD, "ud -g 1 -e -c", "ud -g 1 -c", 1024, 1, 1000, true},
		{SRQ, "srq -g 1 -c", "srq -g 1 -c -e -d sim1", 4096, 16, 1000, true},
		{RC, "rc -g 0 -e -c -n 50", "rc -g 0 -c -n 50", 4096, 1, 50, true}, // the link-local GID works too
		{SRQ, "srq -g 1 -q 1 -r 1 -n 20", "srq -g 1 -q 1 -r 1 -n 20", 4096, 1, 20, false},
		{RC, "rc -g 1 -r 1 -n 20 -s 70000", "rc -g 1 -r 1 -n 20 -s 70000", 70000, 1, 20, false},
	} {
		t.Run(tc.srv+" | "+tc.cli, func(t *testing.T) {
			srv, cli := runBoth(t, f, tc.srv, tc.cli)
			checkPair(t, tc.tr, srv, cli, tc.size, tc.iters, tc.nqp)
		})
	}
}

// -c on the server only: the client never writes the pattern, so every
// page start still holds the fill. rdma-core prints its line per page and
// exits 0; vsh prints the same lines, explains, and exits 1.
func TestCheckWithoutClientPattern(t *testing.T) {
	requireDataPath(t)
	f := newFabric(t)
	page := os.Getpagesize()
	size := 3*page + 5
	srv, cli := runBoth(t, f, fmt.Sprintf("rc -g 1 -c -n 5 -s %d", size), fmt.Sprintf("rc -g 1 -n 5 -s %d", size))
	if cli.code != 0 || srv.code != 1 {
		t.Fatalf("server: %s\nclient: %s", srv, cli)
	}
	var pages []string
	for _, l := range strings.Split(srv.stdout, "\n") {
		if strings.HasPrefix(l, "invalid data in page ") {
			pages = append(pages, l)
		}
	}
	if len(pages) != 4 || pages[0] != "invalid data in page 0" || pages[3] != "invalid data in page 3" {
		t.Errorf("pages %q", pages)
	}
	for _, w := range []string{fmt.Sprintf("-c: page 1: 1 of %d bytes differ, the first at byte %d (0x7b where the pattern has 0x00)", page, page),
		"-c: 4 of 4 pages differ", "pass -c on both sides"} {
		if !strings.Contains(srv.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, srv.stderr)
		}
	}
}
