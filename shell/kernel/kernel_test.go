package kernel

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/vsh-rdma/vsh/shell"
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// freePorts returns n TCP ports free on 127.0.0.1 a moment ago.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// openSim opens the simulator; backend "udp" puts it on the UDP link at
// 127.0.0.77, where time is the wall clock's.
func openSim(s Session) (*shell.Shell, error) {
	seed := int64(1)
	if s.HasSeed {
		seed = s.Seed
	}
	open := func() (verbs.Provider, error) { return sim.New(sim.Config{Devices: 2, Seed: seed}), nil }
	switch s.Backend {
	case "", "sim":
	case "udp":
		open = func() (verbs.Provider, error) { return sim.NewUDP(sim.Config{Devices: 1, Seed: seed}, "127.0.0.77") }
	default:
		return nil, fmt.Errorf("unknown backend %q: sim", s.Backend)
	}
	return shell.New(shell.Options{
		Open:    open,
		Plain:   true,
		Backend: fmt.Sprintf("sim (2 devices, seed %d)", seed),
		Version: "test",
	})
}

// client is a Jupyter client for tests: shell and control DEALERs, an
// iopub SUB, a heartbeat REQ.
type client struct {
	t                   testing.TB
	sig                 signer
	shell, control, sub zmq4.Socket
	hb                  zmq4.Socket
	session             string
	k                   *Kernel
	done                chan error
}

func startKernel(t testing.TB) *client {
	t.Helper()
	p := freePorts(t, 5)
	ci := &ConnectionInfo{Transport: "tcp", IP: "127.0.0.1", ShellPort: p[0], IOPubPort: p[1], StdinPort: p[2], ControlPort: p[3], HBPort: p[4],
		Key: "a-test-key", SignatureScheme: "hmac-sha256"}
	k, err := New(Config{Conn: ci, Open: openSim, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, sig: signer{key: []byte(ci.Key)}, session: newID(), k: k, done: make(chan error, 1)}
	go func() { c.done <- k.Run(context.Background()) }()
	ctx := context.Background()
	c.shell = zmq4.NewDealer(ctx, zmq4.WithID(zmq4.SocketIdentity("client-shell")))
	c.control = zmq4.NewDealer(ctx, zmq4.WithID(zmq4.SocketIdentity("client-control")))
	c.sub = zmq4.NewSub(ctx)
	c.hb = zmq4.NewReq(ctx)
	for _, d := range []struct {
		s    zmq4.Socket
		port int
	}{{c.shell, p[0]}, {c.control, p[3]}, {c.sub, p[1]}, {c.hb, p[4]}} {
		if err := d.s.Dial(ci.endpoint(d.port)); err != nil {
			t.Fatal(err)
		}
	}
	c.sub.SetOption(zmq4.OptionSubscribe, "")
	t.Cleanup(c.close)
	// iopub drops what is published before the subscription lands: wait
	// for it, as Jupyter's clients do, with kernel_info until a status
	// comes.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		c.reply(c.shell, c.request(c.shell, "kernel_info_request", map[string]any{}), 5*time.Second)
		if c.iopubUntilIdle(300*time.Millisecond) != nil {
			return c
		}
	}
	t.Fatal("iopub never delivered a status")
	return nil
}

func (c *client) close() {
	for _, s := range []zmq4.Socket{c.shell, c.control, c.sub, c.hb} {
		s.Close()
	}
	c.k.Close()
}

// request sends a request and returns its header's msg_id.
func (c *client) request(s zmq4.Socket, msgType string, content any) *Message {
	c.t.Helper()
	return c.requestDated(s, msgType, content, now())
}

// requestDated is request with the header's date given.
func (c *client) requestDated(s zmq4.Socket, msgType string, content any, date string) *Message {
	c.t.Helper()
	b, _ := json.Marshal(content)
	m := &Message{Header: Header{MsgID: newID(), Session: c.session, Username: "test", Date: date, MsgType: msgType, Version: ProtocolVersion},
		Parent: json.RawMessage("{}"), Metadata: json.RawMessage("{}"), Content: b}
	frames, err := c.sig.Encode(m)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := s.SendMulti(zmq4.NewMsgFrom(frames...)); err != nil {
		c.t.Fatal(err)
	}
	return m
}

// recv reads one message from s within d.
func (c *client) recv(s zmq4.Socket, d time.Duration) (*Message, error) {
	type res struct {
		m   zmq4.Msg
		err error
	}
	ch := make(chan res, 1)
	go func() { m, err := s.Recv(); ch <- res{m, err} }()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		return c.sig.Decode(r.m.Frames)
	case <-time.After(d):
		return nil, fmt.Errorf("nothing within %v", d)
	}
}

// reply waits for the reply to req on s.
func (c *client) reply(s zmq4.Socket, req *Message, d time.Duration) map[string]any {
	c.t.Helper()
	m, err := c.recv(s, d)
	if err != nil {
		c.t.Fatalf("%s: %v", req.Header.MsgType, err)
	}
	var parent Header
	json.Unmarshal(m.Parent, &parent)
	if parent.MsgID != req.Header.MsgID {
		c.t.Fatalf("%s: a reply to another message (%s)", req.Header.MsgType, m.Header.MsgType)
	}
	var content map[string]any
	json.Unmarshal(m.Content, &content)
	content["msg_type"] = m.Header.MsgType
	return content
}

// iopubUntilIdle collects iopub messages until a status idle, or nil.
func (c *client) iopubUntilIdle(d time.Duration) []*Message {
	var out []*Message
	for {
		m, err := c.recv(c.sub, d)
		if err != nil {
			return out
		}
		out = append(out, m)
		if m.Header.MsgType == "status" && strings.Contains(string(m.Content), `"idle"`) {
			return out
		}
	}
}

// iopubFor collects the iopub messages whose parent is req until its
// status idle, skipping those of earlier requests (a late idle of
// startKernel's kernel_info, say).
func (c *client) iopubFor(req *Message, d time.Duration) []*Message {
	var out []*Message
	for {
		m, err := c.recv(c.sub, d)
		if err != nil {
			return out
		}
		var parent struct {
			MsgID string `json:"msg_id"`
		}
		if json.Unmarshal(m.Parent, &parent) != nil || parent.MsgID != req.Header.MsgID {
			continue
		}
		out = append(out, m)
		if m.Header.MsgType == "status" && strings.Contains(string(m.Content), `"idle"`) {
			return out
		}
	}
}

// execute runs code and returns the reply and the iopub messages.
func (c *client) execute(code string) (map[string]any, []*Message) {
	c.t.Helper()
	req := c.request(c.shell, "execute_request", map[string]any{"code": code, "silent": false, "store_history": true,
		"user_expressions": map[string]any{}, "allow_stdin": false, "stop_on_error": true})
	r := c.reply(c.shell, req, 20*time.Second)
	return r, c.iopubFor(req, 2*time.Second)
}

// outputs joins the text/plain, text/html or image/svg+xml of the
// display data and streams among msgs.
func outputs(msgs []*Message, mime string) string {
	var b strings.Builder
	for _, m := range msgs {
		var c struct {
			Data map[string]string `json:"data"`
			Text string            `json:"text"`
		}
		json.Unmarshal(m.Content, &c)
		switch m.Header.MsgType {
		case "display_data":
			b.WriteString(c.Data[mime])
		case "stream":
			if mime == "text/plain" {
				b.WriteString(c.Text)
			}
		}
	}
	return b.String()
}

func TestKernelInfoAndHeartbeat(t *testing.T) {
	c := startKernel(t)
	r := c.reply(c.shell, c.request(c.shell, "kernel_info_request", map[string]any{}), 5*time.Second)
	if r["protocol_version"] != ProtocolVersion || r["implementation"] != "vsh" || r["language_info"].(map[string]any)["name"] != "vsh" {
		t.Errorf("kernel_info_reply: %v", r)
	}
	c.iopubUntilIdle(time.Second)
	if err := c.hb.Send(zmq4.NewMsgString("ping")); err != nil {
		t.Fatal(err)
	}
	m, err := c.hb.Recv()
	if err != nil || string(m.Bytes()) != "ping" {
		t.Errorf("heartbeat: %q, %v", m.Bytes(), err)
	}
}

func TestKernelExecute(t *testing.T) {
	c := startKernel(t)
	r, io := c.execute("open_device A\nalloc_pd ctx0\n# a comment\nreg_mr pd0 length=64 access=local_write")
	if r["status"] != "ok" || r["execution_count"] != 1.0 {
		t.Fatalf("execute_reply: %v", r)
	}
	if out := outputs(io, "text/plain"); !strings.Contains(out, "[2] ibv_alloc_pd(ctx0) → pd0") || !strings.Contains(out, "[3] ibv_reg_mr") {
		t.Errorf("output:\n%s", out)
	}
	// A "! " line must fail; a failure ends the cell with its parts.
	r, io = c.execute("! open_device Z\nmodify_qp qp7 state=init\nopen_device B")
	if r["status"] != "error" || r["ename"] != "UsageError" || !strings.Contains(fmt.Sprint(r["evalue"]), "qp7") {
		t.Fatalf("execute_reply: %v", r)
	}
	if out := outputs(io, "text/plain"); !strings.Contains(out, `no device "Z"`) || strings.Contains(out, "open_device(B") {
		t.Errorf("output:\n%s", out)
	}
	var errs int
	for _, m := range io {
		if m.Header.MsgType == "error" {
			errs++
			if !strings.Contains(string(m.Content), `"traceback":["UsageError: `) {
				t.Errorf("error: %s", m.Content)
			}
		}
	}
	if errs != 1 {
		t.Errorf("%d error messages", errs)
	}
	// An errno names the error.
	r, _ = c.execute("create_cq ctx0\ncreate_qp pd0 type=rc send_cq=cq0 recv_cq=cq0\nmodify_qp qp0 state=rtr")
	if r["ename"] != "EINVAL" {
		t.Errorf("modify_qp RESET → RTR: %v", r)
	}
	// Tables as HTML, pictures as SVG.
	r, io = c.execute("create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0\nconnect qp0 qp1\ntrace on\npost_recv qp1 mr=mr0\npost_send qp0 mr=mr0\npoll_cq cq0\ntrace ladder")
	if r["status"] != "ok" {
		t.Fatalf("%v\n%s", r, outputs(io, "text/plain"))
	}
	if h := outputs(io, "text/html"); !strings.Contains(h, "<td>IBV_WC_SUCCESS</td>") {
		t.Errorf("html:\n%s", h)
	}
	if svg := outputs(io, "image/svg+xml"); !strings.Contains(svg, "<svg") {
		t.Errorf("no SVG ladder")
	}
	// A cell too large for the kernel.
	r, _ = c.execute(strings.Repeat("#", MaxCell+1))
	if r["status"] != "error" || !strings.Contains(fmt.Sprint(r["evalue"]), "at most") {
		t.Errorf("a huge cell: %v", r)
	}
	// quit does not end the session.
	if r, _ = c.execute("quit"); r["status"] != "error" {
		t.Errorf("quit: %v", r)
	}
	// history
	h := c.reply(c.shell, c.request(c.shell, "history_request", map[string]any{"hist_access_type": "tail", "n": 2, "output": false, "raw": true}), 5*time.Second)
	c.iopubUntilIdle(time.Second)
	if got := fmt.Sprint(h["history"]); !strings.Contains(got, "quit") || strings.Contains(got, "open_device A") {
		t.Errorf("history tail 2: %v", got)
	}
}

func TestKernelCompleteInspect(t *testing.T) {
	c := startKernel(t)
	c.execute("open_device A\nalloc_pd ctx0\ncreate_cq ctx0\ncreate_qp pd0 type=rc send_cq=cq0 recv_cq=cq0")
	code := "open_device A\nmodify_qp qp0 state=r"
	r := c.reply(c.shell, c.request(c.shell, "complete_request", map[string]any{"code": code, "cursor_pos": len([]rune(code))}), 5*time.Second)
	c.iopubUntilIdle(time.Second)
	if got := fmt.Sprint(r["matches"]); !strings.Contains(got, "rtr") || !strings.Contains(got, "rts") || r["cursor_start"] != float64(len([]rune(code))-1) {
		t.Errorf("complete: %v", r)
	}
	r = c.reply(c.shell, c.request(c.shell, "complete_request", map[string]any{"code": "%ch", "cursor_pos": 3}), 5*time.Second)
	c.iopubUntilIdle(time.Second)
	if fmt.Sprint(r["matches"]) != "[%check]" || r["cursor_start"] != 0.0 {
		t.Errorf("complete a magic: %v", r)
	}
	r = c.reply(c.shell, c.request(c.shell, "inspect_request", map[string]any{"code": "mqp qp0 state=init", "cursor_pos": 2, "detail_level": 0}), 5*time.Second)
	c.iopubUntilIdle(time.Second)
	if r["found"] != true || !strings.Contains(fmt.Sprint(r["data"]), "usage: modify_qp") {
		t.Errorf("inspect: %v", r)
	}
	for code, want := range map[string]string{"open_device A": "complete", `fill mr0 "abc`: "invalid", `fill mr0 "it's" # don't`: "complete",
		"create_qp pd0 type=rc \\": "incomplete", "create_qp pd0 type=rc \\\n  send_cq=cq0": "complete", `fill mr0 "a\\\\"`: "complete",
		"open_device A \\\n": "complete", "# a note \\": "complete", "open_device A # a note \\": "complete"} {
		r = c.reply(c.shell, c.request(c.shell, "is_complete_request", map[string]any{"code": code}), 5*time.Second)
		c.iopubUntilIdle(time.Second)
		if r["status"] != want {
			t.Errorf("is_complete %q: %v, want %s", code, r, want)
		}
	}
}

// TestKernelContinuedLines: in a cell, as in a script, a line ending in
// '\' continues on the next, so the cell runs as its hand-in is graded.
func TestKernelContinuedLines(t *testing.T) {
	c := startKernel(t)
	r, io := c.execute("open_device A\nalloc_pd ctx0\ncreate_cq ctx0 \\\n  cqe=16\ncreate_qp pd0 type=rc \\\r\n  send_cq=cq0 \\\n  recv_cq=cq0")
	if r["status"] != "ok" {
		t.Fatalf("a cell with continued lines: %v\n%s", r, outputs(io, "text/plain"))
	}
	r, io = c.execute("show qp0")
	if out := outputs(io, "text/plain"); r["status"] != "ok" || !strings.Contains(out, "qp0") {
		t.Errorf("the continued create_qp made no qp0: %v\n%s", r, out)
	}
	r, io = c.execute("show cq0")
	if out := outputs(io, "text/plain"); !strings.Contains(out, "cqe 31,") { // rxe rounds 16 up
		t.Errorf("create_cq's continued cqe=16 was not taken: %v\n%s", r, out)
	}
	// A comment's '\' continues nothing, as in sh.
	r, io = c.execute("# B next \\\nopen_device B")
	if out := outputs(io, "text/plain"); r["status"] != "ok" || !strings.Contains(out, "ctx1") {
		t.Errorf("the command after a comment ending in \\ did not run: %v\n%s", r, out)
	}
	// Completion sees the command a continued line belongs to.
	code := "create_qp pd0 type=rc \\\n  send_cq=c"
	r = c.reply(c.shell, c.request(c.shell, "complete_request", map[string]any{"code": code, "cursor_pos": len([]rune(code))}), 5*time.Second)
	c.iopubUntilIdle(time.Second)
	if got := fmt.Sprint(r["matches"]); !strings.Contains(got, "cq0") {
		t.Errorf("completing send_cq= on a continued line: %v", r)
	}
}

// TestKernelInterrupt: interrupt_request on the control channel stops a
// waiting poll_cq.
func TestKernelInterrupt(t *testing.T) {
	c := startKernel(t)
	// On the UDP link a wait takes the wall clock's time.
	if r, io := c.execute("%backend udp\nopen_device sim0\nalloc_pd ctx0\ncreate_cq ctx0"); r["status"] != "ok" {
		t.Fatalf("%v\n%s", r, outputs(io, "text/plain"))
	}
	req := c.request(c.shell, "execute_request", map[string]any{"code": "poll_cq cq0 wait=10s\nopen_device sim0", "silent": false, "store_history": true})
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	ir := c.request(c.control, "interrupt_request", map[string]any{})
	if r := c.reply(c.control, ir, 5*time.Second); r["status"] != "ok" {
		t.Errorf("interrupt_reply: %v", r)
	}
	r := c.reply(c.shell, req, 5*time.Second)
	if r["status"] != "error" || r["ename"] != "Interrupted" || time.Since(start) > 3*time.Second {
		t.Errorf("interrupted poll: %v after %v", r, time.Since(start))
	}
	// The session goes on.
	if r, _ := c.execute("open_device sim0"); r["status"] != "ok" {
		t.Errorf("after the interrupt: %v", r)
	}
}

// TestKernelBadInput: messages that do not decode are dropped; the kernel
// answers the next one.
func TestKernelBadInput(t *testing.T) {
	c := startKernel(t)
	bad := [][][]byte{
		{[]byte("<IDS|MSG>"), []byte("0000"), []byte(`{"msg_type":"kernel_info_request","msg_id":"x"}`), []byte("{}"), []byte("{}"), []byte("{}")}, // bad signature
		{[]byte("no delimiter")},
		{[]byte("<IDS|MSG>"), []byte("x")},
	}
	for _, frames := range bad {
		if err := c.shell.SendMulti(zmq4.NewMsgFrom(frames...)); err != nil {
			t.Fatal(err)
		}
	}
	// Signed, but not JSON; and an unknown type.
	for _, parts := range [][]string{{`{"msg_type":"execute_request","msg_id":"y"}`, "{}", "{}", "{not json"}, {`{"msg_type":"frobnicate_request","msg_id":"z"}`, "{}", "{}", "{}"}} {
		frames := [][]byte{[]byte(delimiter), []byte(c.sig.sign([]byte(parts[0]), []byte(parts[1]), []byte(parts[2]), []byte(parts[3])))}
		for _, p := range parts {
			frames = append(frames, []byte(p))
		}
		c.shell.SendMulti(zmq4.NewMsgFrom(frames...))
	}
	r := c.reply(c.shell, c.request(c.shell, "kernel_info_request", map[string]any{}), 5*time.Second)
	if r["msg_type"] != "kernel_info_reply" {
		t.Errorf("after bad input: %v", r)
	}
}

func TestKernelLessonMagics(t *testing.T) {
	c := startKernel(t)
	r, io := c.execute("%lesson tour")
	if r["status"] != "ok" || !strings.Contains(outputs(io, "text/plain"), "A tour of an RDMA device") {
		t.Fatalf("%%lesson: %v\n%s", r, outputs(io, "text/plain"))
	}
	r, io = c.execute("%check 1")
	if r["status"] != "ok" || !strings.Contains(outputs(io, "text/plain"), "✗ step 1: not yet") {
		t.Errorf("%%check 1 before: %v\n%s", r, outputs(io, "text/plain"))
	}
	if r, _ = c.execute("%check --strict 1"); r["status"] != "error" || r["ename"] != "GoalNotReached" {
		t.Errorf("%%check --strict 1 before: %v", r)
	}
	c.execute("devices")
	if r, io = c.execute("%check --strict 1"); r["status"] != "ok" || !strings.Contains(outputs(io, "text/plain"), "✓ step 1: goal reached") {
		t.Errorf("%%check --strict 1 after: %v\n%s", r, outputs(io, "text/plain"))
	}
	for code, want := range map[string]string{"%check x": "step number", "%lesson": "one lesson", "%lesson nosuch": "nosuch", "%frob": "no magic %frob", "%backend ibv": "unknown backend"} {
		if r, _ = c.execute(code); r["status"] != "error" || !strings.Contains(fmt.Sprint(r["evalue"]), want) {
			t.Errorf("%s: %v, want %q", code, r, want)
		}
	}
	r, io = c.execute("%seed 7\nopen_device A")
	if r["status"] != "ok" || !strings.Contains(outputs(io, "text/plain"), "seed 7") || !strings.Contains(outputs(io, "text/plain"), "[1] ibv_open_device") {
		t.Errorf("%%seed 7: %v\n%s", r, outputs(io, "text/plain"))
	}
}

func TestKernelShutdown(t *testing.T) {
	c := startKernel(t)
	r := c.reply(c.control, c.request(c.control, "shutdown_request", map[string]any{"restart": false}), 5*time.Second)
	if r["status"] != "ok" {
		t.Errorf("shutdown_reply: %v", r)
	}
	select {
	case err := <-c.done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the kernel did not end")
	}
}

// TestKernelHostilePeers: a ZMTP peer that names a frame of 2^62 bytes on
// each port, and a heartbeat message without a delimiter, leave the kernel
// serving: it answers kernel_info and its heartbeat still echoes.
func TestKernelHostilePeers(t *testing.T) {
	c := startKernel(t)
	ci := c.k.cfg.Conn
	greeting := make([]byte, 64)
	greeting[0], greeting[9], greeting[10] = 0xff, 0x7f, 3
	copy(greeting[12:], "NULL")
	for _, port := range []int{ci.ShellPort, ci.ControlPort, ci.StdinPort, ci.IOPubPort, ci.HBPort} {
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Fatal(err)
		}
		conn.Write(greeting)
		conn.Write([]byte{0x06, 0x40, 0, 0, 0, 0, 0, 0, 0})
		time.Sleep(50 * time.Millisecond)
		conn.Close()
	}
	bad := zmq4.NewDealer(context.Background())
	defer bad.Close()
	if err := bad.Dial(ci.endpoint(ci.HBPort)); err != nil {
		t.Fatal(err)
	}
	bad.Send(zmq4.NewMsgString("x"))
	time.Sleep(100 * time.Millisecond)
	r := c.reply(c.shell, c.request(c.shell, "kernel_info_request", map[string]any{}), 5*time.Second)
	if r["msg_type"] != "kernel_info_reply" {
		t.Errorf("after hostile peers: %v", r)
	}
	if err := c.hb.Send(zmq4.NewMsgString("ping")); err != nil {
		t.Fatal(err)
	}
	if m, err := c.recvRaw(c.hb, 5*time.Second); err != nil || string(m) != "ping" {
		t.Errorf("heartbeat after a bad message: %q, %v", m, err)
	}
}

// recvRaw reads one message's bytes from s within d.
func (c *client) recvRaw(s zmq4.Socket, d time.Duration) ([]byte, error) {
	ch := make(chan zmq4.Msg, 1)
	errs := make(chan error, 1)
	go func() {
		m, err := s.Recv()
		if err != nil {
			errs <- err
			return
		}
		ch <- m
	}()
	select {
	case m := <-ch:
		return m.Bytes(), nil
	case err := <-errs:
		return nil, err
	case <-time.After(d):
		return nil, fmt.Errorf("nothing within %v", d)
	}
}

// TestKernelAbortsQueuedCells: Run All sends every cell at once; after the
// first failure the cells already queued are answered "aborted", not run.
func TestKernelAbortsQueuedCells(t *testing.T) {
	c := startKernel(t)
	var reqs []*Message
	// The first cell runs long enough (a thousand round trips) for the
	// others to arrive while it runs, mostly; on a loaded machine they may
	// arrive after it failed, and then, as a Run All's cells, they are
	// dated when the run began, before the failure.
	date := now()
	for _, code := range []string{"pingpong rc\nmodify_qp qp9 state=init", "open_device A", "open_device B"} {
		reqs = append(reqs, c.requestDated(c.shell, "execute_request", map[string]any{"code": code, "silent": false, "store_history": true, "stop_on_error": true}, date))
	}
	var got []any
	for _, req := range reqs {
		got = append(got, c.reply(c.shell, req, 10*time.Second)["status"])
	}
	if fmt.Sprint(got) != "[error aborted aborted]" {
		t.Errorf("replies: %v", got)
	}
	for len(c.iopubUntilIdle(300*time.Millisecond)) > 0 { // the three cells' statuses
	}
	// Nothing ran: the next cell's first handle is ctx0.
	if _, io := c.execute("open_device A"); !strings.Contains(outputs(io, "text/plain"), "ibv_open_device(A = sim0) → ctx0") {
		t.Errorf("an aborted cell ran: %s", outputs(io, "text/plain"))
	}
}

// TestKernelRunsCellAfterFailedReply: a cell sent as soon as the failed
// cell's reply is read was sent after it, so it runs; many times, for the
// reply and the next request race: the kernel pauses after each message
// so that the next request is queued before it looks.
func TestKernelRunsCellAfterFailedReply(t *testing.T) {
	pause := func() { time.Sleep(20 * time.Millisecond) }
	testHookHandled.Store(&pause)
	defer testHookHandled.Store(nil)
	c := startKernel(t)
	for i := range 5 {
		req := c.request(c.shell, "execute_request", map[string]any{"code": "modify_qp qp9 state=init", "silent": false, "store_history": true, "stop_on_error": true})
		if r := c.reply(c.shell, req, 10*time.Second); r["status"] != "error" {
			t.Fatalf("round %d, the failing cell: %v", i, r)
		}
		req = c.request(c.shell, "execute_request", map[string]any{"code": "", "silent": false, "store_history": true, "stop_on_error": true})
		if r := c.reply(c.shell, req, 10*time.Second); r["status"] != "ok" {
			t.Fatalf("round %d, the cell after it: %v", i, r)
		}
	}
}

// TestKernelSilentFailureAbortsNothing: as in ipykernel, a silent cell
// that fails (a frontend's background request) aborts none of the cells
// queued behind it.
func TestKernelSilentFailureAbortsNothing(t *testing.T) {
	pause := func() { time.Sleep(20 * time.Millisecond) }
	testHookHandled.Store(&pause)
	defer testHookHandled.Store(nil)
	c := startKernel(t)
	bad := c.request(c.shell, "execute_request", map[string]any{"code": "modify_qp qp9 state=init", "silent": true, "store_history": false, "stop_on_error": true})
	next := c.request(c.shell, "execute_request", map[string]any{"code": "", "silent": false, "store_history": true, "stop_on_error": true})
	got := []any{c.reply(c.shell, bad, 10*time.Second)["status"], c.reply(c.shell, next, 10*time.Second)["status"]}
	if fmt.Sprint(got) != "[error ok]" {
		t.Errorf("replies: %v; want [error ok]", got)
	}
}

// TestKernelRunAllStopsAtFastFailure: a Run All cell that reaches the
// kernel only after the first cell failed at once — dated before the
// failure's reply — is aborted; one dated after it runs, and so does an
// old-dated one that arrives well after the reply (a client whose clock
// runs behind).
func TestKernelRunAllStopsAtFastFailure(t *testing.T) {
	c := startKernel(t)
	cell := func(code, date string) *Message {
		return c.requestDated(c.shell, "execute_request", map[string]any{"code": code, "silent": false, "store_history": true, "stop_on_error": true}, date)
	}
	for _, tc := range []struct {
		name  string
		date  func(before string) string
		sleep time.Duration
		want  string
	}{
		{"a cell of the burst, on its way", func(before string) string { return before }, 0, "aborted"},
		{"a cell sent after the reply", func(string) string { return now() }, 0, "ok"},
		{"an old date, long after", func(before string) string { return before }, 2 * abortGrace, "ok"},
	} {
		before := now()
		time.Sleep(2 * time.Millisecond)
		if r := c.reply(c.shell, cell("modify_qp qp9 state=init", now()), 10*time.Second); r["status"] != "error" {
			t.Fatalf("%s: the failing cell: %v", tc.name, r)
		}
		time.Sleep(tc.sleep)
		if r := c.reply(c.shell, cell("", tc.date(before)), 10*time.Second); r["status"] != tc.want {
			t.Errorf("%s: %v; want %s", tc.name, r["status"], tc.want)
		}
	}
}

// TestKernelSVG: a picture is well-formed SVG, as wide as the output area
// at most.
func TestKernelSVG(t *testing.T) {
	c := startKernel(t)
	r, io := c.execute("open_device A\nalloc_pd ctx0\ncreate_cq ctx0\ncreate_qp pd0 type=rc send_cq=cq0 recv_cq=cq0\nshow qp0 --diagram")
	svg := outputs(io, "image/svg+xml")
	if r["status"] != "ok" || !strings.HasPrefix(svg, `<svg xmlns="http://www.w3.org/2000/svg" width="100%" style="max-width: `) {
		t.Fatalf("%v: %.200s", r, svg)
	}
	if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
		t.Errorf("not XML: %v", err)
	}
}

// TestKernelMagicWords: a magic's words are read as a command's: quotes
// and a trailing comment.
func TestKernelMagicWords(t *testing.T) {
	c := startKernel(t)
	for code, want := range map[string]string{
		"%check 3 # the third step":    "no lesson is running",
		`%lesson "no such/less on.md"`: "less on.md",
		`%seed 7 # again`:              "seed 7",
		`%lesson "open`:                "quote",
	} {
		r, io := c.execute(code)
		if got := fmt.Sprint(r["evalue"], outputs(io, "text/plain")); !strings.Contains(got, want) {
			t.Errorf("%s: %v, want %q", code, got, want)
		}
	}
	code := "open_device A"
	for _, pos := range []int{-5, 1000} {
		r := c.reply(c.shell, c.request(c.shell, "complete_request", map[string]any{"code": code, "cursor_pos": pos}), 5*time.Second)
		c.iopubUntilIdle(time.Second)
		start, end := r["cursor_start"].(float64), r["cursor_end"].(float64)
		if start < 0 || end > float64(len(code)) || start > end {
			t.Errorf("cursor_pos %d: cursor %v to %v", pos, start, end)
		}
	}
}
