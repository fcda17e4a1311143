package shell

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// group is a section of help and of docs/commands.md.
type group int

const (
	gDevice group = iota
	gMemory
	gCQ
	gQP
	gData
	gView
	gFabric
	gSession
	numGroups
)

var groupTitles = [numGroups]string{
	gDevice:  "Devices and contexts",
	gMemory:  "Protection domains and memory",
	gCQ:      "Completion queues and channels",
	gQP:      "Queue pairs, SRQs and address handles",
	gData:    "Data path: posting and polling",
	gView:    "Views",
	gFabric:  "The fabric (simulator)",
	gSession: "Session",
}

// command is one entry of the command table, the single source of help,
// completion and docs/commands.md.
type command struct {
	Name    string
	Aliases []string
	Group   group
	// Usage is the grammar line: "reg_mr PD length=N [access=FLAGS]".
	Usage string
	// Summary is one line, as help lists it.
	Summary string
	// Help is the long text of help CMD.
	Help string
	Args []argSpec
	// rawArgs: the handler reads its words itself (repeat, explain, fill).
	rawArgs bool
	// meta: a session command; no live view after it.
	meta bool
	// notebook: false for commands a saved notebook leaves out (save,
	// source — whose commands are saved instead — and quit).
	skipNotebook bool
	run          func(*call) error
	// complete completes the arguments of a rawArgs command: words are the
	// complete words after the command name, word the one being typed.
	complete func(s *Shell, words []token, word string) []Suggestion
}

func (c *command) findSpec(name string, k argKind) *argSpec {
	for i := range c.Args {
		sp := &c.Args[i]
		if sp.kind != k {
			continue
		}
		if sp.name == name {
			return sp
		}
		for _, a := range sp.aliases {
			if a == name {
				return sp
			}
		}
	}
	return nil
}

func (c *command) positionals() []argSpec {
	var out []argSpec
	for _, sp := range c.Args {
		if sp.kind == posArg {
			out = append(out, sp)
		}
	}
	return out
}

func (c *command) usageHint() string { return "usage: " + c.Usage }

// Handle-valued arguments shared by several commands.
var (
	argCtx = pos("CTX", vCtx, true, "a device context: ctx0")
	argPD  = pos("PD", vPD, true, "a protection domain: pd0")
	argMR  = pos("MR", vMR, true, "a memory region: mr0")
	argCQ  = pos("CQ", vCQ, true, "a completion queue: cq0")
	argQP  = pos("QP", vQP, true, "a queue pair: qp0")
	argSRQ = pos("SRQ", vSRQ, true, "a shared receive queue: srq0")
)

// recvArgs are the arguments of post_recv and post_srq_recv.
func recvArgs(first argSpec) []argSpec {
	return []argSpec{
		first,
		key("mr", vMR, "", "the MR the buffer is in (one SGE)"),
		key("offset", vSize, "0", "where the buffer starts in the MR"),
		key("length", vSize, "rest of the MR", "the buffer's length", "len"),
		key("sge", vSGE, "", "a list of SGEs instead of mr=: mr0:0:64,mr1:0:32 (MR:OFFSET:LENGTH)"),
		key("wr_id", vNum, "next number", "the work request's id, echoed in its completion"),
		key("count", vNum, "1", "post this many WRs in one call, wr_id counting up"),
	}
}

// commandTable builds the table, sorted by group then name.
func commandTable() []*command {
	cmds := []*command{
		// Devices and contexts.
		{Name: "devices", Group: gDevice, Usage: "devices",
			Summary: "List the RDMA devices (ibv_get_device_list), and what A and B stand for",
			Help: "Lists the devices the backend offers, as ibv_devices does. Scripts name devices A and B so that " +
				"they run anywhere: A is the first device and B the second, or the first again where there is only one " +
				"(a single rxe0: the two ends then talk over loopback, as rxe allows).",
			run: cmdDevices},
		{Name: "devinfo", Group: gDevice, Usage: "devinfo [DEV] [-v]",
			Summary: "Print a device's attributes and ports, as ibv_devinfo does",
			Help:    "Opens the device, queries it and its ports, and closes it again. With -v it prints every limit and the GID table.",
			Args: []argSpec{pos("DEV", vDevice, false, "a device: sim0, A or B; all devices when omitted"),
				flag("-v", "verbose: every device limit and the GID table", "verbose")},
			run: cmdDevinfo},
		{Name: "open_device", Aliases: []string{"open"}, Group: gDevice, Usage: "open_device DEV",
			Summary: "Open a device (ibv_open_device) and get a context: ctx0",
			Help:    "Every other object hangs off a context. DEV is a device name (sim0, rxe0) or A or B.",
			Args:    []argSpec{pos("DEV", vDevice, true, "a device: sim0, A or B")},
			run:     cmdOpenDevice},
		{Name: "close_device", Aliases: []string{"close"}, Group: gDevice, Usage: "close_device CTX",
			Summary: "Close a context (ibv_close_device); what was made from it goes too",
			Help: "As with libibverbs, closing a context frees every object still made from it (the kernel cleans up when " +
				"the device file closes), so their handles go too. A careful program destroys them first, newest first.",
			Args: []argSpec{argCtx}, run: cmdCloseDevice},
		{Name: "query_device", Group: gDevice, Usage: "query_device CTX",
			Summary: "Print the device's attributes and limits (ibv_query_device)",
			Args:    []argSpec{argCtx}, run: cmdQueryDevice},
		{Name: "query_port", Group: gDevice, Usage: "query_port CTX [port=1]",
			Summary: "Print a port's attributes (ibv_query_port): state, MTUs, link layer",
			Help:    "On RoCE (link_layer Ethernet) the port's active_mtu is what path_mtu should not exceed.",
			Args:    []argSpec{argCtx, key("port", vNum, "1", "the port number")}, run: cmdQueryPort},
		{Name: "query_gid", Group: gDevice, Usage: "query_gid CTX [index=N] [port=1]",
			Summary: "Print a GID (ibv_query_gid), or the whole GID table",
			Help: "Without index= it prints every entry of the port's GID table with its type (ibv_query_gid_type). " +
				"On RoCE v2 the IPv4-mapped GID (::ffff:a.b.c.d) is the one two hosts on an IPv4 network use; pass its index as sgid_index.",
			Args: []argSpec{argCtx, key("index", vNum, "all", "the GID index", "gid_index"), key("port", vNum, "1", "the port number")},
			run:  cmdQueryGID},
		{Name: "async_events", Group: gDevice, Usage: "async_events CTX [wait=DURATION]",
			Summary: "Read and acknowledge the pending async events (ibv_get_async_event, ibv_ack_async_event)",
			Help: "Async events report what no completion can: a QP that went to the error state, an SRQ below its limit, " +
				"a port that changed state. wait= waits that long for the first event.",
			Args: []argSpec{argCtx, key("wait", vDuration, "0", "how long to wait for the first event")},
			run:  cmdAsyncEvents},

		// Protection domains and memory.
		{Name: "alloc_pd", Group: gMemory, Usage: "alloc_pd CTX",
			Summary: "Allocate a protection domain (ibv_alloc_pd): pd0",
			Help:    "A PD groups the MRs, QPs, SRQs and AHs that may be used together: a QP can only use MRs of its own PD.",
			Args:    []argSpec{argCtx}, run: cmdAllocPD},
		{Name: "dealloc_pd", Group: gMemory, Usage: "dealloc_pd PD",
			Summary: "Free a protection domain (ibv_dealloc_pd)",
			Help:    "Fails with EBUSY while MRs, QPs, SRQs or AHs still use it.",
			Args:    []argSpec{argPD}, run: cmdDeallocPD},
		{Name: "reg_mr", Aliases: []string{"reg"}, Group: gMemory, Usage: "reg_mr PD length=N [access=FLAGS]",
			Summary: "Allocate and register memory (memalign + ibv_reg_mr): mr0 with its addr, lkey and rkey",
			Help: "access= takes short forms, libibverbs names or a number: local_write,remote_write, " +
				"IBV_ACCESS_LOCAL_WRITE|IBV_ACCESS_REMOTE_READ, 0. Remote write and remote atomic also need local_write. " +
				"The lkey goes into local SGEs; the rkey is what the peer needs for RDMA READ, WRITE and atomics.",
			Args: []argSpec{argPD, reqKey("length", vSize, "the size in bytes: 4096, 0x1000 or 4k", "len"),
				key("access", vAccess, "0", "access flags")},
			run: cmdRegMR},
		{Name: "dereg_mr", Aliases: []string{"dereg"}, Group: gMemory, Usage: "dereg_mr MR",
			Summary: "Deregister a memory region (ibv_dereg_mr)", Args: []argSpec{argMR}, run: cmdDeregMR},
		{Name: "mem", Group: gMemory, Usage: "mem MR [OFFSET] [LENGTH]",
			Summary: "Hex dump of a memory region's bytes",
			Help:    "The memory is the application's own: reading it is no verb. LENGTH defaults to 64 bytes (at most the rest of the MR).",
			Args: []argSpec{argMR, pos("OFFSET", vSize, false, "where to start, default 0"),
				pos("LENGTH", vSize, false, "how many bytes, default 64")},
			run: cmdMem},
		{Name: "fill", Group: gMemory, Usage: "fill MR \"TEXT\"|0xNN [offset=N] [length=N]",
			Summary: "Write into a memory region: text, or one byte repeated",
			Help: "fill mr0 \"hello\" writes the text at offset 0; fill mr0 0xab length=64 repeats the byte. " +
				"Quoted text may use \\n, \\t, \\0 and \\xNN. The memory is the application's own: writing it is no verb.",
			Args: []argSpec{argMR, pos("DATA", vText, true, "\"text\" or a byte 0xNN"),
				key("offset", vSize, "0", "where to start"), key("length", vSize, "text length, or the rest of the MR", "where to stop", "len")},
			run: cmdFill},

		// Completion queues and channels.
		{Name: "create_comp_channel", Group: gCQ, Usage: "create_comp_channel CTX",
			Summary: "Create a completion event channel (ibv_create_comp_channel): ch0",
			Help:    "A channel lets a program sleep until a CQ it armed with req_notify_cq gets a completion.",
			Args:    []argSpec{argCtx}, run: cmdCreateChannel},
		{Name: "destroy_comp_channel", Group: gCQ, Usage: "destroy_comp_channel CH",
			Summary: "Destroy a completion channel (ibv_destroy_comp_channel)",
			Args:    []argSpec{pos("CH", vChan, true, "a completion channel: ch0")}, run: cmdDestroyChannel},
		{Name: "create_cq", Group: gCQ, Usage: "create_cq CTX [cqe=16] [channel=CH] [comp_vector=0]",
			Summary: "Create a completion queue (ibv_create_cq): cq0",
			Help:    "The device may give more entries than cqe asks for. Size it for every signaled send and every receive that can be outstanding, or it overflows.",
			Args: []argSpec{argCtx, key("cqe", vNum, "16", "the least number of entries"),
				key("channel", vChan, "none", "a completion channel for events"),
				key("comp_vector", vNum, "0", "the completion vector")},
			run: cmdCreateCQ},
		{Name: "resize_cq", Group: gCQ, Usage: "resize_cq CQ cqe=N",
			Summary: "Change a CQ's size (ibv_resize_cq)",
			Args:    []argSpec{argCQ, reqKey("cqe", vNum, "the new least number of entries")}, run: cmdResizeCQ},
		{Name: "destroy_cq", Group: gCQ, Usage: "destroy_cq CQ",
			Summary: "Destroy a completion queue (ibv_destroy_cq)",
			Help:    "Fails with EBUSY while a QP uses it.",
			Args:    []argSpec{argCQ}, run: cmdDestroyCQ},
		{Name: "req_notify_cq", Group: gCQ, Usage: "req_notify_cq CQ [solicited]",
			Summary: "Arm a CQ to raise one event on its channel (ibv_req_notify_cq)",
			Help:    "An armed CQ raises one event on its channel at the next completion (with solicited: the next solicited or error completion), then must be armed again.",
			Args:    []argSpec{argCQ, flag("solicited", "only solicited or error completions raise the event", "solicited_only")},
			run:     cmdReqNotify},
		{Name: "get_cq_event", Group: gCQ, Usage: "get_cq_event CH [wait=DURATION]",
			Summary: "Take the next completion event from a channel (ibv_get_cq_event)",
			Help:    "Says which CQ raised it. Every event must be acknowledged with ack_cq_events before the CQ can be destroyed.",
			Args:    []argSpec{pos("CH", vChan, true, "a completion channel: ch0"), key("wait", vDuration, "0", "how long to wait")},
			run:     cmdGetCQEvent},
		{Name: "ack_cq_events", Group: gCQ, Usage: "ack_cq_events CQ [n=1]",
			Summary: "Acknowledge completion events (ibv_ack_cq_events)",
			Args:    []argSpec{argCQ, key("n", vNum, "1", "how many events")}, run: cmdAckCQEvents},

		// Queue pairs, SRQs and address handles.
		{Name: "create_qp", Group: gQP,
			Usage: "create_qp PD type=rc|uc|ud send_cq=CQ recv_cq=CQ [srq=SRQ] [max_send_wr=16] [max_recv_wr=16] " +
				"[max_send_sge=1] [max_recv_sge=1] [max_inline=0] [sq_sig_all]",
			Summary: "Create a queue pair (ibv_create_qp): qp0, in state RESET",
			Help: "A new QP is in RESET and can do nothing until modify_qp walks it to INIT, RTR and RTS (or connect does). " +
				"With srq= its receives come from the SRQ and post_recv on it fails. sq_sig_all makes every send signaled.",
			Args: []argSpec{argPD,
				reqKey("type", vQPType, "the transport: rc, uc or ud (or IBV_QPT_RC, ...)", "qp_type"),
				reqKey("send_cq", vCQ, "the CQ for send completions"),
				reqKey("recv_cq", vCQ, "the CQ for receive completions"),
				key("srq", vSRQ, "none", "a shared receive queue"),
				key("max_send_wr", vNum, "16", "send queue depth"),
				key("max_recv_wr", vNum, "16", "receive queue depth"),
				key("max_send_sge", vNum, "1", "SGEs per send WR"),
				key("max_recv_sge", vNum, "1", "SGEs per receive WR"),
				key("max_inline", vNum, "0", "bytes a send may carry inline", "max_inline_data"),
				flag("sq_sig_all", "every send WR completes with a CQE")},
			run: cmdCreateQP},
		{Name: "modify_qp", Aliases: []string{"mqp"}, Group: gQP, Usage: "modify_qp QP [state=STATE] [ATTR=VALUE ...]",
			Summary: "Change a QP's state and attributes (ibv_modify_qp)",
			Help: "The attribute mask is made from the attributes given: state=rtr path_mtu=1024 sets IBV_QP_STATE|IBV_QP_PATH_MTU. " +
				"Each transition requires some attributes and allows others; a missing or extra one is EINVAL, and the error names it.\n\n" +
				"\tRC/UC  RESET→INIT  state=init pkey_index=0 port=1 access=remote_write     (UD: qkey=0x11111111 instead of access)\n" +
				"\tRC     INIT→RTR    state=rtr path_mtu=1024 dest_qpn=qp1 rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12 dgid=qp1 sgid_index=1 hop_limit=1\n" +
				"\tRC     RTR→RTS     state=rts sq_psn=0 timeout=14 retry_cnt=7 rnr_retry=7 max_rd_atomic=1\n\n" +
				"dest_qpn= and remote QPNs take a handle (qp1) or a number; dgid= takes a GID or a handle (qp1, ctx1, B), " +
				"read at the same sgid_index. The address vector (IBV_QP_AV) is dgid, sgid_index, hop_limit, traffic_class, " +
				"flow_label, sl and dlid; dgid= implies is_global=1 and hop_limit=1. port= is the QP's port (IBV_QP_PORT) " +
				"unless address-vector attributes are given: then it is the address vector's port_num.",
			Args: []argSpec{argQP,
				key("state", vState, "", "the new state: reset, init, rtr, rts, sqd, err", "qp_state"),
				key("cur_state", vState, "", "the state the QP is believed to be in (IBV_QP_CUR_STATE)", "cur_qp_state"),
				key("pkey_index", vNum, "", "IBV_QP_PKEY_INDEX"),
				key("port", vNum, "", "IBV_QP_PORT, or the address vector's port_num", "port_num"),
				key("access", vAccess, "", "IBV_QP_ACCESS_FLAGS: what the peer may do (remote_write, remote_read, remote_atomic)", "qp_access_flags"),
				key("qkey", vNum, "", "IBV_QP_QKEY (UD)"),
				key("path_mtu", vMTU, "", "IBV_QP_PATH_MTU: 256, 512, 1024, 2048, 4096"),
				key("dest_qpn", vQPN, "", "IBV_QP_DEST_QPN: the peer QP (qp1 or a number)", "dest_qp_num"),
				key("rq_psn", vNum, "", "IBV_QP_RQ_PSN: the first PSN the peer sends"),
				key("sq_psn", vNum, "", "IBV_QP_SQ_PSN: this QP's first PSN"),
				key("max_dest_rd_atomic", vNum, "", "IBV_QP_MAX_DEST_RD_ATOMIC"),
				key("max_rd_atomic", vNum, "", "IBV_QP_MAX_QP_RD_ATOMIC", "max_qp_rd_atomic"),
				key("min_rnr_timer", vNum, "", "IBV_QP_MIN_RNR_TIMER"),
				key("timeout", vNum, "", "IBV_QP_TIMEOUT: ACK timeout, 4.096 µs × 2^timeout"),
				key("retry_cnt", vNum, "", "IBV_QP_RETRY_CNT"),
				key("rnr_retry", vNum, "", "IBV_QP_RNR_RETRY (7: forever)"),
				key("dgid", vGID, "", "address vector: the peer's GID, or a handle", "gid"),
				key("sgid_index", vNum, "", "address vector: the local GID index"),
				key("hop_limit", vNum, "", "address vector: the GRH hop limit"),
				key("traffic_class", vNum, "", "address vector: the GRH traffic class"),
				key("flow_label", vNum, "", "address vector: the GRH flow label"),
				key("sl", vNum, "", "address vector: the service level"),
				key("dlid", vNum, "", "address vector: the destination LID (InfiniBand)"),
				key("is_global", vBool, "", "address vector: whether a GRH is used"),
				key("path_mig_state", vMigState, "", "IBV_QP_PATH_MIG_STATE: migrated, rearm, armed"),
				key("en_sqd_async_notify", vBool, "", "IBV_QP_EN_SQD_ASYNC_NOTIFY"),
				key("rate_limit", vNum, "", "IBV_QP_RATE_LIMIT")},
			run: cmdModifyQP},
		{Name: "query_qp", Aliases: []string{"qqp"}, Group: gQP, Usage: "query_qp QP",
			Summary: "Print every attribute of a QP (ibv_query_qp)",
			Args:    []argSpec{argQP}, run: cmdQueryQP},
		{Name: "destroy_qp", Group: gQP, Usage: "destroy_qp QP",
			Summary: "Destroy a queue pair (ibv_destroy_qp)", Args: []argSpec{argQP}, run: cmdDestroyQP},
		{Name: "connect", Group: gQP, Usage: "connect QP QP [access=remote_write,remote_read,remote_atomic] [sgid_index=1]",
			Summary: "Take two QPs to RTS, connected to each other, as rc_pingpong does; prints every verb",
			Help: "Runs ibv_modify_qp six times: both QPs RESET→INIT, INIT→RTR (each pointing at the other), RTR→RTS, " +
				"with rc_pingpong's values: port 1, pkey_index 0, path_mtu 1024, PSN 0, max_dest_rd_atomic 1, min_rnr_timer 12, " +
				"hop_limit 1, timeout 14, retry_cnt 7, rnr_retry 7, max_rd_atomic 1, and the given QP access (all remote access by default). " +
				"UD QPs get qkey 0x11111111 and need no peer. A QP already past RESET starts from where it is. " +
				"Each step is printed as the modify_qp command that does it, so you can replay it by hand.",
			Args: []argSpec{pos("QP", vQP, true, "the first QP"), pos("QP", vQP, true, "the second QP (the same one for a QP talking to itself)"),
				key("access", vAccess, "remote_write,remote_read,remote_atomic", "the QPs' access flags", "qp_access_flags"),
				key("sgid_index", vNum, "1", "the GID index on both sides"),
				key("path_mtu", vMTU, "1024", "the path MTU")},
			run: cmdConnect},
		{Name: "create_srq", Group: gQP, Usage: "create_srq PD [max_wr=64] [max_sge=1] [srq_limit=0]",
			Summary: "Create a shared receive queue (ibv_create_srq): srq0",
			Args: []argSpec{argPD, key("max_wr", vNum, "64", "the queue depth"), key("max_sge", vNum, "1", "SGEs per WR"),
				key("srq_limit", vNum, "0", "raise IBV_EVENT_SRQ_LIMIT_REACHED below this many WRs", "limit")},
			run: cmdCreateSRQ},
		{Name: "modify_srq", Group: gQP, Usage: "modify_srq SRQ [max_wr=N] [srq_limit=N]",
			Summary: "Resize an SRQ or arm its limit (ibv_modify_srq)",
			Args: []argSpec{argSRQ, key("max_wr", vNum, "", "IBV_SRQ_MAX_WR: the new depth"),
				key("srq_limit", vNum, "", "IBV_SRQ_LIMIT: arm the limit event", "limit")},
			run: cmdModifySRQ},
		{Name: "query_srq", Group: gQP, Usage: "query_srq SRQ",
			Summary: "Print an SRQ's attributes (ibv_query_srq)", Args: []argSpec{argSRQ}, run: cmdQuerySRQ},
		{Name: "destroy_srq", Group: gQP, Usage: "destroy_srq SRQ",
			Summary: "Destroy a shared receive queue (ibv_destroy_srq)", Args: []argSpec{argSRQ}, run: cmdDestroySRQ},
		{Name: "create_ah", Group: gQP, Usage: "create_ah PD dgid=GID|HANDLE [sgid_index=0] [hop_limit=64] [port=1] [sl=0] [traffic_class=0] [flow_label=0]",
			Summary: "Create an address handle for UD sends (ibv_create_ah): ah0",
			Help:    "dgid= takes a GID (::ffff:127.0.0.2, fe80::1 or 32 hex digits) or a handle (qp1, ctx1, B), read at the same sgid_index.",
			Args: []argSpec{argPD, reqKey("dgid", vGID, "the destination GID, or a handle", "gid"),
				key("sgid_index", vNum, "0", "the local GID index"), key("hop_limit", vNum, "64", "the GRH hop limit"),
				key("port", vNum, "1", "the port", "port_num"), key("sl", vNum, "0", "the service level"),
				key("traffic_class", vNum, "0", "the GRH traffic class"), key("flow_label", vNum, "0", "the GRH flow label")},
			run: cmdCreateAH},
		{Name: "destroy_ah", Group: gQP, Usage: "destroy_ah AH",
			Summary: "Destroy an address handle (ibv_destroy_ah)",
			Args:    []argSpec{pos("AH", vAH, true, "an address handle: ah0")}, run: cmdDestroyAH},
		{Name: "attach_mcast", Group: gQP, Usage: "attach_mcast QP gid=GID [lid=0]",
			Summary: "Join a UD QP to a multicast group (ibv_attach_mcast)",
			Args:    []argSpec{argQP, reqKey("gid", vGID, "the multicast GID (ff0e::...)", "dgid"), key("lid", vNum, "0", "the multicast LID")},
			run:     cmdAttachMcast},
		{Name: "detach_mcast", Group: gQP, Usage: "detach_mcast QP gid=GID [lid=0]",
			Summary: "Leave a multicast group (ibv_detach_mcast)",
			Args:    []argSpec{argQP, reqKey("gid", vGID, "the multicast GID", "dgid"), key("lid", vNum, "0", "the multicast LID")},
			run:     cmdDetachMcast},
		joinGroupCmd(), leaveGroupCmd(), // cmd_hostgroup.go: the host's IP group, which attach_mcast does not join

		// Data path.
		{Name: "post_recv", Aliases: []string{"recv"}, Group: gData,
			Usage:   "post_recv QP mr=MR [offset=0] [length=N] [wr_id=N] [count=N] | post_recv QP sge=MR:OFF:LEN,... [wr_id=N] [count=N]",
			Summary: "Post receive work requests (ibv_post_recv)",
			Help: "A receive WR names where an incoming SEND (or the immediate of a WRITE with immediate) lands. " +
				"Receives may be posted from INIT on; a SEND that finds no receive is answered with an RNR NAK. " +
				"On a UD QP the first 40 bytes receive the GRH.",
			Args: recvArgs(argQP), run: cmdPostRecv},
		{Name: "post_srq_recv", Group: gData,
			Usage:   "post_srq_recv SRQ mr=MR [offset=0] [length=N] [wr_id=N] [count=N] | post_srq_recv SRQ sge=... [wr_id=N] [count=N]",
			Summary: "Post receive work requests to a shared receive queue (ibv_post_srq_recv)",
			Args:    recvArgs(argSRQ), run: cmdPostSRQRecv},
		{Name: "post_send", Aliases: []string{"send"}, Group: gData,
			Usage: "post_send QP [opcode=send] mr=MR [offset=0] [length=N] | sge=...  [wr_id=N] [flags=signaled] [imm=N] " +
				"[remote=MR[+OFF] | remote_addr=A rkey=K] [ah=AH remote_qpn=QPN remote_qkey=K] [compare=N swap=N add=N] [count=N]",
			Summary: "Post a send work request (ibv_post_send): send, RDMA write/read, atomics",
			Help: "opcode= is send, send_with_imm, rdma_write, rdma_write_with_imm, rdma_read, atomic_cmp_and_swp or " +
				"atomic_fetch_and_add (or IBV_WR_... names). flags= defaults to signaled (a CQE when it completes); " +
				"flags=0 posts it unsignaled. RDMA and atomics need the remote buffer: remote=mr1+100 takes its address and rkey " +
				"from a handle. Atomics work on 8 bytes (length defaults to 8). UD sends need ah=, remote_qpn= and remote_qkey= " +
				"(default 0x11111111). Sends may be posted in RTS only.",
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
				key("compare", vNum, "0", "atomic_cmp_and_swp: the value to compare", "compare_add"),
				key("swap", vNum, "0", "atomic_cmp_and_swp: the value to write"),
				key("add", vNum, "", "atomic_fetch_and_add: the value to add"),
				key("count", vNum, "1", "post this many WRs in one call, wr_id counting up")},
			run: cmdPostSend},
		{Name: "poll_cq", Aliases: []string{"poll"}, Group: gData, Usage: "poll_cq CQ [n=16] [wait=DURATION]",
			Summary: "Take completions off a CQ (ibv_poll_cq) and print them",
			Help: "Polling takes completions off the CQ: each is seen once. wait= keeps polling until n completions came or " +
				"the time is up; on real hardware completions arrive in real time, so scripts and lessons use it. On the " +
				"simulator in auto mode, wait lets virtual time pass (retransmit and RNR timers fire); in step mode it only polls.",
			Args: []argSpec{argCQ, key("n", vNum, "16", "the most completions to take", "num_entries"),
				key("wait", vDuration, "0", "how long to keep polling")},
			run: cmdPollCQ},

		// Views.
		{Name: "show", Group: gView, Usage: "show [OBJ...]",
			Summary: "Draw objects: a QP's state diagram and queues, a CQ's occupancy, an MR's keys; all handles when none given",
			rawArgs: true, run: cmdShow, complete: completeHandles},
		{Name: "watch", Group: gView, Usage: "watch [OBJ...]",
			Summary: "Redraw objects after every command (both QPs and both CQs, say)",
			Help:    "Without arguments it lists what is watched. Watched objects are drawn below each command's output, like Delve's display.",
			rawArgs: true, run: cmdWatch, complete: completeHandles},
		{Name: "unwatch", Group: gView, Usage: "unwatch OBJ...|all",
			Summary: "Stop redrawing objects", rawArgs: true, run: cmdUnwatch, complete: completeWatched},

		// Fabric.
		{Name: "backend", Group: gFabric, Usage: "backend",
			Summary: "Say which backend runs the verbs and what it lets you see and do",
			meta:    true, run: cmdBackend},
		{Name: "fabric", Group: gFabric, Usage: "fabric [auto|step]",
			Summary: "Show or set when the simulated fabric moves packets",
			Help: "auto (the default) delivers every packet right after the verb that caused it, so programs just work. " +
				"step holds every packet until step, run or advance moves it, so you can watch a transfer one packet at a time.",
			Args: []argSpec{pos("MODE", vDelivery, false, "auto or step")}, run: cmdFabric},
		{Name: "step", Group: gFabric, Usage: "step [N]",
			Summary: "Deliver one packet or fire one timer (N times)",
			Args:    []argSpec{pos("N", vNum, false, "how many steps, default 1")}, run: cmdStep},
		{Name: "run", Group: gFabric, Usage: "run",
			Summary: "Deliver packets until none is in flight (timers not yet due stay armed)", run: cmdRun},
		{Name: "advance", Group: gFabric, Usage: "advance DURATION",
			Summary: "Move virtual time forward: due timers fire (retransmits, RNR retries)",
			Args:    []argSpec{pos("DURATION", vDuration, true, "how far: 10ms, 1s")}, run: cmdAdvance},
		{Name: "fault", Group: gFabric,
			Usage:   "fault [list] | fault ACTION [opcode=NAME] [psn=N] [from=DEV] [to=DEV] [nth=N] [count=N] [prob=P] [delay=D] | fault del ID | fault clear",
			Summary: "Break the wire on purpose: drop, duplicate, reorder, delay, corrupt or cut packets",
			Help: "ACTION is drop, duplicate, reorder, delay, corrupt or cut. opcode= matches the packet's opcode name " +
				"(send_only, rdma_write_first, acknowledge: any part of it); nth=2 acts on the second matching packet only; " +
				"count=N retires the rule after N hits; prob=0.1 acts at random, from the seed. " +
				"Example: fault drop opcode=acknowledge nth=1, then watch the requester retransmit.",
			rawArgs: true, run: cmdFault, complete: completeFault},
		{Name: "trace", Group: gFabric, Usage: "trace on|off|pcap FILE",
			Summary: "Print every packet on the wire after each command; pcap also writes them to a file for Wireshark",
			Args:    []argSpec{pos("MODE", vTrace, true, "on, off or pcap"), pos("FILE", vFile, false, "the pcap file")},
			run:     cmdTrace},

		// Session.
		{Name: "help", Aliases: []string{"?"}, Group: gSession, Usage: "help [CMD]",
			Summary: "List the commands, or explain one",
			Args:    []argSpec{pos("CMD", vCommand, false, "a command")}, meta: true, run: cmdHelp},
		{Name: "explain", Group: gSession, Usage: "explain IBV_WC_RNR_RETRY_EXC_ERR | EINVAL | rts | rdma_write | rdma_write_first | ...",
			Summary: "Explain a completion status, errno, QP state, opcode (work request or wire), flag or attribute",
			rawArgs: true, meta: true, run: cmdExplain, complete: completeExplain},
		{Name: "history", Group: gSession, Usage: "history [n=N]",
			Summary: "List the cells of this session (! marks the ones that failed)",
			Args:    []argSpec{key("n", vNum, "all", "only the last N")}, meta: true, run: cmdHistory},
		{Name: "save", Group: gSession, Usage: "save FILE.md",
			Summary: "Save the session as a Markdown notebook; vsh -f FILE.md replays it",
			Help: "Each command goes in a ```vsh block followed by its output; a command that failed is saved as a \"! \" line, " +
				"which a replay expects to fail. save, source and quit are left out (the commands source ran are saved instead).",
			Args: []argSpec{pos("FILE", vFile, true, "the notebook to write")}, meta: true, skipNotebook: true, run: cmdSave},
		{Name: "source", Group: gSession, Usage: "source FILE",
			Summary: "Run the commands of a script or notebook, each as a cell",
			Help:    "As vsh -f: # starts a comment, a line starting with \"! \" must fail, and the first other failure stops it. A .md file runs its ```vsh blocks.",
			Args:    []argSpec{pos("FILE", vFile, true, "a script (.vsh) or notebook (.md)")}, skipNotebook: true, run: cmdSource},
		{Name: "repeat", Group: gSession, Usage: "repeat N COMMAND...",
			Summary: "Run a command N times in one cell; {i} in it counts 0, 1, 2, ...",
			Help: "Stops at the first failure. Example: repeat 4 post_recv qp1 mr=mr1 offset={i}00 length=64 wr_id={i}. " +
				"{i+16}, {i*2} and {i*2+1} count from elsewhere: repeat 16 connect qp{i} qp{i+16}. do makes a loop body of several commands.",
			rawArgs: true, run: cmdRepeat, complete: completeRepeat},
		{Name: "reset", Group: gSession, Usage: "reset",
			Summary: "Destroy every object and restart the backend, as at the start of the session",
			run:     cmdReset},
		{Name: "quit", Aliases: []string{"exit", "q"}, Group: gSession, Usage: "quit",
			Summary: "Leave vsh (Ctrl-D does too)", meta: true, skipNotebook: true, run: cmdQuit},
		lessonCmd(), doCmd(), ppDestCmd(), ppStatsCmd(), // cmd_lesson.go, cmd_do.go, cmd_pp.go
		exchangeCmd(), pingpongCmd(), // cmd_exchange.go, cmd_pingpong.go
		storeCmd(), // cmd_store.go
		pathsCmd(), // cmd_paths.go
		benchCmd(), // cmd_bench.go
	}
	sort.SliceStable(cmds, func(i, j int) bool { return cmds[i].Group < cmds[j].Group })
	return cmds
}

// writeHelp lists the commands by group, Delve-style.
func (s *Shell) writeHelp(o *output) {
	for g := group(0); g < numGroups; g++ {
		o.add(groupTitles[g] + ":")
		w := 0
		for _, c := range s.cmds {
			if c.Group == g {
				w = max(w, len(c.Name))
			}
		}
		for _, c := range s.cmds {
			if c.Group != g {
				continue
			}
			o.addf("  %-*s  %s", w, c.Name, c.Summary)
		}
		o.add("")
	}
	o.add("help CMD explains one command; explain X explains an error, state or opcode.")
	o.add("In arguments, " + strings.ReplaceAll(numberSyntax, "`", "") + ".")
	o.add("Verbs marked [control path] set up and tear down, each a command into the kernel; [data path] verbs move data and")
	o.add("completions from user space where the device allows (on soft-RoCE post_send's doorbell is a system call): paths shows each one's way.")
}

// writeCommandHelp prints help CMD.
func writeCommandHelp(o *output, c *command) {
	o.add("usage: " + c.Usage)
	if len(c.Aliases) > 0 {
		o.add("aliases: " + strings.Join(c.Aliases, ", "))
	}
	o.add("")
	o.add(c.Summary + ".")
	if c.Help != "" {
		o.add("")
		o.add(strings.ReplaceAll(c.Help, "\t", "  "))
	}
	if rows := argRows(c); len(rows) > 0 {
		o.add("")
		o.add(table([]string{"argument", "default", "meaning"}, rows))
	}
}

func argRows(c *command) [][]string {
	var rows [][]string
	for _, sp := range c.Args {
		if sp.help == "" {
			continue
		}
		name := sp.name
		switch sp.kind {
		case keyArg:
			name += "="
		}
		if len(sp.aliases) > 0 && sp.kind != posArg {
			name += " (" + strings.Join(sp.aliases, ", ") + ")"
		}
		def := sp.def
		if sp.req {
			def = "required"
		}
		if def == "" {
			def = "-"
		}
		rows = append(rows, []string{name, def, sp.help})
	}
	return rows
}

// WriteMarkdown writes the command reference, docs/commands.md, from the
// command table. go generate ./shell runs it.
func WriteMarkdown(w io.Writer) error {
	cmds := commandTable()
	var b strings.Builder
	b.WriteString("<!-- Code generated by go generate ./shell from shell/commands.go. DO NOT EDIT. -->\n\n")
	b.WriteString("# vsh commands\n\n")
	b.WriteString("Every command of the verbs shell, generated from the same table that feeds `help` and completion.\n")
	b.WriteString("Arguments are `key=value`; " + numberSyntax + "; flags and enums take short forms " +
		"(`remote_write`), libibverbs names (`IBV_ACCESS_REMOTE_WRITE`) or numbers; a handle (`qp1`, `mr1+100`) " +
		"stands wherever its number would. A line starting with `! ` must fail; `#` starts a comment.\n\n")
	b.WriteString("Verbs tagged `[control path]` set up and tear down objects, each a command into the kernel; `[data path]` verbs move " +
		"data and completions from user space where the device allows — on hardware `ibv_post_send`, `ibv_post_recv` and `ibv_poll_cq` " +
		"never enter the kernel, while soft-RoCE rings its doorbell with a `write()` system call. `paths` shows how rdma-core carries out each verb.\n\n")
	for g := group(0); g < numGroups; g++ {
		fmt.Fprintf(&b, "- [%s](#%s)\n", groupTitles[g], anchor(groupTitles[g]))
	}
	b.WriteString("- [Stopping a command, and limits](#stopping-a-command-and-limits)\n")
	b.WriteString("\n")
	for g := group(0); g < numGroups; g++ {
		fmt.Fprintf(&b, "## %s\n\n", groupTitles[g])
		for _, c := range cmds {
			if c.Group != g {
				continue
			}
			fmt.Fprintf(&b, "### %s\n\n", c.Name)
			fmt.Fprintf(&b, "    %s\n\n", c.Usage)
			b.WriteString(c.Summary + ".\n")
			if len(c.Aliases) > 0 {
				fmt.Fprintf(&b, "Aliases: %s.\n", "`"+strings.Join(c.Aliases, "`, `")+"`")
			}
			b.WriteString("\n")
			if c.Help != "" {
				for _, para := range strings.Split(c.Help, "\n\n") {
					if strings.HasPrefix(para, "\t") {
						for _, l := range strings.Split(para, "\n") {
							b.WriteString("    " + strings.TrimPrefix(l, "\t") + "\n")
						}
					} else {
						b.WriteString(para + "\n")
					}
					b.WriteString("\n")
				}
			}
			if rows := argRows(c); len(rows) > 0 {
				b.WriteString("| argument | default | meaning |\n|---|---|---|\n")
				for _, r := range rows {
					fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r[0], mdEscape(r[1]), mdEscape(r[2]))
				}
				b.WriteString("\n")
			}
		}
	}
	writeLimits(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

func anchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
