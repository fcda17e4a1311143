package shell

import (
	"fmt"
	"sort"
	"strings"
	"syscall"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// errnoText explains what an errno means when a verb returns it.
var errnoText = map[syscall.Errno]string{
	verbs.EINVAL: "Invalid argument, the commonest verbs error. ibv_modify_qp: an attribute the transition requires is missing, " +
		"one it does not accept is given, or the transition itself is illegal (RESET→RTR). ibv_post_send and ibv_post_recv: the " +
		"QP is in the wrong state (receives need INIT or later, sends need RTS; RESET refuses both) or the WR is malformed. " +
		"Creating objects: a value beyond the device's limits (query_device shows them).",
	verbs.ENOMEM: "Out of resources. ibv_post_send/ibv_post_recv: the queue is full, usually because completions were not polled " +
		"(an unsignaled send keeps its slot until a later signaled one completes), or too many SGEs or inline bytes. Creating " +
		"objects: more than the device allows. ibv_reg_mr: over the locked-memory limit (ulimit -l).",
	verbs.EBUSY: "The object is still in use. Destroy in reverse order: QPs before their CQs and SRQ, MRs, QPs, SRQs and AHs " +
		"before their PD, CQs, channels and PDs before closing the device; acknowledge a CQ's events before destroying it.",
	verbs.EAGAIN: "Nothing yet: no completion event or async event is pending. Try again later, or give wait=.",
	verbs.EPERM: "Not permitted: the access asked for is not allowed, for example remote_write or remote_atomic on an MR " +
		"without local_write.",
	13:               "Permission denied: on a real machine, no access to /dev/infiniband/uverbs*; or an access right the device refuses.",
	verbs.ENOENT:     "No such entry: a GID index past the end of the table, or an object that does not exist.",
	verbs.ENODEV:     "No such device: the device is gone, or the port number is wrong.",
	verbs.EFAULT:     "Bad address: memory to register is not mapped.",
	verbs.EOPNOTSUPP: "Not supported by this device: for example XRC or a QP type rxe does not have.",
	verbs.ENOSYS:     "The backend does not implement this verb.",
	verbs.ETIMEDOUT:  "Timed out: a wait ran out before anything came.",
	verbs.EIO:        "Input/output error: the device failed.",
	verbs.EEXIST:     "Already exists: for example `rdma link add` of a soft-RoCE device on a netdev that already has one (rxe_newlink); attaching a QP to a multicast group twice is not an error.",
	verbs.ENOSPC:     "No space left: a table (GIDs, multicast attachments) is full.",
	verbs.ERANGE:     "Out of range: a value outside what the field can hold.",
	verbs.EADDRNOTAVAIL: "Address not available: leave_group for an IP group this host's socket did not join " +
		"(ip_mc_leave_group, ipv6_sock_mc_drop); join_group first, or leave the group you joined.",
}

// fallbackHints adds a hint to a backend error that came without one.
var fallbackHints = map[string]map[syscall.Errno]string{
	"ibv_post_send": {
		verbs.EINVAL: "sends need the QP in RTS (connect or modify_qp walks it there); check the opcode against the QP type",
		verbs.ENOMEM: "the send queue is full: poll_cq the send CQ to retire completions, or create the QP with a larger max_send_wr",
	},
	"ibv_post_recv": {
		verbs.EINVAL: "receives need the QP in INIT or later; a QP with an SRQ takes post_srq_recv on the SRQ instead",
		verbs.ENOMEM: "the receive queue is full: let messages arrive and poll them, or create the QP with a larger max_recv_wr",
	},
	"ibv_post_srq_recv": {
		verbs.ENOMEM: "the SRQ is full: poll the receive CQ, or create the SRQ with a larger max_wr",
	},
	"ibv_modify_qp": {
		verbs.EINVAL: "explain the target state (explain rtr) to see what the transition needs",
	},
	"ibv_destroy_cq": {verbs.EBUSY: "destroy the QPs that use this CQ first, and acknowledge its events"},
	"ibv_dealloc_pd": {verbs.EBUSY: "deregister its MRs and destroy its QPs, SRQs and AHs first"},
	"ibv_reg_mr":     {verbs.EINVAL: "remote_write and remote_atomic also need local_write"},
}

func fallbackHint(op string, errno syscall.Errno) string {
	if h := fallbackHints[op][errno]; h != "" {
		return h
	}
	return "explain " + verbs.ErrnoName(errno) + " says what it usually means"
}

// stateText explains the QP states.
var stateText = map[verbs.QPState]string{
	verbs.QPSReset: "Reset: the state a QP is created in. It has no peer and no port; posting to it fails with EINVAL. " +
		"Modifying any QP to RESET empties its queues without completions.",
	verbs.QPSInit: "Initialized: bound to a port and partition, with its access rights. Receives may be posted now (rc_pingpong " +
		"posts them here), but incoming packets are not yet accepted and sends cannot be posted.",
	verbs.QPSRTR: "Ready To Receive: the QP knows its peer (dest_qpn, the address vector with the peer's GID), the path MTU and " +
		"the PSN to expect. Incoming packets are accepted and complete receives; sends still cannot be posted.",
	verbs.QPSRTS: "Ready To Send: the QP has its own starting PSN and its retry parameters (timeout, retry_cnt, rnr_retry), and " +
		"sends may be posted. This is where a working QP lives.",
	verbs.QPSSQD: "Send Queue Drained: new sends wait while the ones in progress finish; some attributes may be changed here, " +
		"then the QP goes back to RTS.",
	verbs.QPSSQE: "Send Queue Error (UC and UD only): a send failed; receives still work, and modify_qp state=rts resumes sending. " +
		"An RC QP goes to ERR instead.",
	verbs.QPSErr: "Error: every outstanding and new work request completes with IBV_WC_WR_FLUSH_ERR. A QP enters it after an error " +
		"completion on RC, or by modify_qp state=err. Only modify_qp state=reset gets it out.",
}

// wrOpcodeText explains the work request opcodes.
var wrOpcodeText = map[verbs.WROpcode]string{
	verbs.WRRDMAWrite: "RDMA WRITE: copies the local buffer into the peer's memory at remote_addr, with its rkey. The peer's CPU " +
		"is not involved: no receive is consumed and the peer sees no completion. RC and UC.",
	verbs.WRRDMAWriteWithImm: "RDMA WRITE with immediate: an RDMA WRITE that also delivers 4 bytes of immediate data to the peer, " +
		"consuming one of its receives, which completes as IBV_WC_RECV_RDMA_WITH_IMM. RC and UC.",
	verbs.WRSend: "SEND: the message lands in the buffer of the peer's next receive WQE, which completes as IBV_WC_RECV. " +
		"Without a posted receive, RC answers with an RNR NAK and retries. RC, UC and UD.",
	verbs.WRSendWithImm: "SEND with immediate: a SEND that also carries 4 bytes of immediate data, reported in the receiver's " +
		"completion (imm_data, with IBV_WC_WITH_IMM).",
	verbs.WRRDMARead: "RDMA READ: fetches the peer's memory at remote_addr (rkey) into the local buffer, which needs local_write. " +
		"The peer's MR needs remote_read, and its QP remote_read in qp_access_flags. RC only.",
	verbs.WRAtomicCmpAndSwp: "Atomic compare and swap: on 8 bytes of the peer's memory, if they equal compare, replace them by " +
		"swap; the original value comes back into the local 8-byte buffer. Needs remote_atomic. RC only.",
	verbs.WRAtomicFetchAndAdd: "Atomic fetch and add: adds add to 8 bytes of the peer's memory and returns the original value " +
		"into the local buffer. Needs remote_atomic. RC only.",
	verbs.WRLocalInv:    "Local invalidate: invalidates a local key (memory windows and fast registration; not in vsh).",
	verbs.WRBindMW:      "Bind a memory window (not in vsh).",
	verbs.WRSendWithInv: "SEND with invalidate: a SEND that also invalidates an rkey at the receiver.",
	verbs.WRTSO:         "TCP segmentation offload (raw packet QPs only).",
}

// wcOpcodeText explains the completion opcodes.
var wcOpcodeText = map[verbs.WCOpcode]string{
	verbs.WCOpSend:            "A send work request (IBV_WR_SEND, SEND_WITH_IMM) completed on the sender.",
	verbs.WCOpRDMAWrite:       "An RDMA WRITE completed on the requester (the responder sees none, unless with immediate).",
	verbs.WCOpRDMARead:        "An RDMA READ completed: the data is in the local buffer.",
	verbs.WCOpCompSwap:        "A compare-and-swap completed: the original remote value is in the local buffer.",
	verbs.WCOpFetchAdd:        "A fetch-and-add completed: the original remote value is in the local buffer.",
	verbs.WCOpBindMW:          "A memory window bind completed.",
	verbs.WCOpLocalInv:        "A local invalidate completed.",
	verbs.WCOpTSO:             "A TSO send completed.",
	verbs.WCOpRecv:            "A receive completed: a SEND landed in the buffer; byte_len is its length (on UD, plus the 40-byte GRH).",
	verbs.WCOpRecvRDMAWithImm: "An RDMA WRITE with immediate consumed this receive: the data went to memory, the immediate is in imm_data.",
}

var accessText = map[verbs.Access]string{
	verbs.AccessLocalWrite:      "The device may write this memory: needed for receive buffers, READ and atomic results, and for remote write or atomic access.",
	verbs.AccessRemoteWrite:     "The peer may RDMA WRITE into this memory (with the rkey). On a QP: the QP accepts incoming RDMA WRITEs.",
	verbs.AccessRemoteRead:      "The peer may RDMA READ this memory. On a QP: the QP accepts incoming RDMA READs.",
	verbs.AccessRemoteAtomic:    "The peer may run atomics on this memory. On a QP: the QP accepts incoming atomics.",
	verbs.AccessMWBind:          "Memory windows may be bound to this MR.",
	verbs.AccessZeroBased:       "Remote addresses count from 0 rather than from the MR's virtual address.",
	verbs.AccessOnDemand:        "On-demand paging: the memory need not be pinned.",
	verbs.AccessHugeTLB:         "The memory is backed by huge pages.",
	verbs.AccessRelaxedOrdering: "The device may reorder writes to this memory for speed.",
}

var sendFlagText = map[verbs.SendFlags]string{
	verbs.SendFence:     "Wait for earlier READs and atomics on this QP to finish before starting this WR.",
	verbs.SendSignaled:  "Generate a completion when this WR finishes (without it, only sq_sig_all does). Unsignaled WRs keep their send-queue slots until a later signaled WR completes.",
	verbs.SendSolicited: "Set the solicited event bit: a receiver that armed its CQ with req_notify_cq solicited wakes up for it.",
	verbs.SendInline:    "Copy the data into the WQE now: the buffer may be reused at once and needs no lkey; at most max_inline_data bytes.",
	verbs.SendIPCsum:    "Offload the IP checksum (raw packet QPs).",
}

// qpTypeExplain explains each QP type: what it promises and what it carries.
var qpTypeExplain = map[verbs.QPType]string{
	verbs.QPTypeRC: "Reliable Connected: the QP talks to one peer QP (dest_qpn). The responder acknowledges every message and the " +
		"requester resends what is lost (Go-Back-N from the lost PSN), so messages arrive once, in order, or the QP reports an error. " +
		"It carries SEND, RDMA WRITE, RDMA READ and atomics, messages of up to the port's max_msg_sz (8 MiB on rxe) cut into path-MTU packets.",
	verbs.QPTypeUC: "Unreliable Connected: connected to one peer QP like RC, but nothing is acknowledged or resent: a lost packet " +
		"loses its whole message, silently, and the sender still completes it. It carries SEND and RDMA WRITE (no READ, no atomics).",
	verbs.QPTypeUD: "Unreliable Datagram: connected to no one; each send names where it goes (an address handle, remote_qpn and " +
		"remote_qkey), and one QP reaches any number of peers, or a multicast group. A message is one packet (at most the path MTU); " +
		"only SEND; the receiver gets a 40-byte GRH in front of each message, and nothing is acknowledged or resent.",
	verbs.QPTypeRawPacket: "Raw packet: whole Ethernet frames, sent and received with no RDMA transport; it needs CAP_NET_RAW and a " +
		"device that offers it (kernel rxe does not).",
	verbs.QPTypeXRCSend: "XRC sending QP (create_qp_ex type=xrc_send): reliable and connected like RC, to one XRC_RECV QP of the peer, " +
		"with no receive side; each send names the peer's XRC SRQ that takes it (post_send remote_srqn=).",
	verbs.QPTypeXRCRecv: "XRC receiving QP (create_qp_ex CTX type=xrc_recv): lives in an XRC domain, with no PD, CQs or queues of its " +
		"own; it hands each message to the XRC SRQ its sender names, and the completion goes to that SRQ's CQ.",
}

// concepts explains the words of RDMA a learner meets first.
var concepts = map[string]string{
	"lkey":     "Local key: names an MR in a local SGE. ibv_reg_mr returns it; post_send and post_recv put it in each SGE.",
	"rkey":     "Remote key: what the peer puts in an RDMA READ, WRITE or atomic to reach this MR. Send it to the peer with the address (rc_pingpong's exchange carries it).",
	"psn":      "Packet Sequence Number: 24 bits counting the packets of a QP. rq_psn (RTR) is the first PSN expected from the peer, sq_psn (RTS) the first one sent; the two sides must agree.",
	"qpn":      "QP number (qp_num): 24 bits naming a QP on its device; the peer needs it as dest_qpn.",
	"gid":      "Global identifier: on RoCE an IPv6 address (an IPv4 address in its ::ffff:a.b.c.d form) from the port's GID table; the peer needs it as dgid.",
	"grh":      "Global Route Header: the IPv6-like header an address vector with is_global=1 produces. RoCE requires it; on UD the receiver gets its 40 bytes in front of each message.",
	"mtu":      "Path MTU: the largest payload of one packet (256 to 4096). Longer messages are cut into FIRST, MIDDLE and LAST packets. Keep path_mtu within the port's active_mtu.",
	"rnr":      "Receiver Not Ready: a SEND arrived with no receive WQE posted. The responder answers with an RNR NAK carrying min_rnr_timer; the requester waits and retries, rnr_retry times (7: forever).",
	"qkey":     "Q_Key: a 32-bit key UD QPs check on every datagram: a datagram whose Q_Key differs from the receiving QP's is dropped silently.",
	"ack":      "Acknowledgement: on RC the responder ACKs (or NAKs) requests; the requester retires a WQE when its ACK arrives and retransmits after the timeout when none does.",
	"nak":      "Negative acknowledgement: an ACKNOWLEDGE packet whose AETH syndrome says PSN sequence error, invalid request, remote access error or remote operational error.",
	"icrc":     "Invariant CRC: the 4-byte CRC at the end of every RoCE packet, over the fields no router changes; a corrupt packet fails it and is dropped.",
	"roce":     "RDMA over Converged Ethernet: InfiniBand transport packets in UDP (port 4791) over IP (RoCE v2). rxe implements it in the kernel.",
	"signaled": "A signaled WR generates a completion. post_send in vsh signals by default (flags=signaled); flags=0 posts unsignaled.",
	"inline":   "Inline data is copied into the WQE at post time, so the buffer needs no MR and can be reused at once.",
	"sge":      "Scatter/gather element: (address, length, lkey) of one piece of a buffer. A WR lists several to gather a send from, or scatter a receive into, pieces.",
	"wqe":      "Work queue entry: a posted work request as it sits in a send or receive queue until it completes.",
	"cqe":      "Completion queue entry: one work completion, read with poll_cq.",
	"xrc":      xrcText,
	"xrcd":     "XRC domain (open_xrcd): the set of XRC SRQs and XRC_RECV QPs that serve each other; processes share one by opening the same file.",
	"srqn":     "SRQ number (get_srq_num): 24 bits naming an SRQ on its device; an XRC sender puts it in every request (post_send remote_srqn=), in the XRCETH header.",
	"srq": "Shared receive queue (create_srq): one pool of receive WQEs that several QPs take from, so that receive buffers need not be posted per QP; " +
		"it warns (IBV_EVENT_SRQ_LIMIT_REACHED) when fewer than its armed limit are left.",
	"remote_srqn": "What an XRC send names: the number of the peer's XRC SRQ that takes it (get_srq_num prints it), carried in the XRCETH header of every request.",
	"remote_qpn":  "What a UD send names: the number of the QP it goes to, on the device its address handle reaches (two devices may number their QPs alike). 0xffffff is a multicast group's.",
}

// explainTopics lists every name explain knows, for completion.
func explainTopics() []Suggestion {
	var out []Suggestion
	add := func(text, desc string) { out = append(out, Suggestion{Text: text, Description: desc}) }
	for st := verbs.WCSuccess; st <= verbs.WCTMRndvIncomplete; st++ {
		add(st.String(), "completion status: "+st.Str())
		add(st.Short(), "completion status: "+st.Str())
	}
	for n := range errnoText {
		add(verbs.ErrnoName(n), "errno")
	}
	for s := verbs.QPSReset; s <= verbs.QPSErr; s++ {
		add(s.Short(), "QP state "+s.String())
	}
	for _, n := range verbs.WROpcodeNames() {
		add(n, "work request opcode")
	}
	for _, op := range wire.Opcodes() {
		add(strings.ToLower(op.String()), "wire opcode")
	}
	for _, n := range verbs.AccessNames() {
		add(n, "access flag")
	}
	for _, n := range verbs.SendFlagNames() {
		add(n, "send flag")
	}
	for _, n := range verbs.QPTypeNames() {
		add(n, "QP type")
	}
	for k := range concepts {
		add(k, "concept")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Text < out[j].Text })
	return dedupe(out)
}

func dedupe(in []Suggestion) []Suggestion {
	var out []Suggestion
	for i, s := range in {
		if i > 0 && strings.EqualFold(in[i-1].Text, s.Text) {
			continue
		}
		out = append(out, s)
	}
	return out
}

func explainCmd() *command {
	return &command{Name: "explain", Group: gSession, Usage: "explain IBV_WC_RNR_RETRY_EXC_ERR | EINVAL | rts | rdma_write | rdma_write_first | ...",
		Summary: "Explain a completion status, errno, QP state or type, opcode (work request or wire), flag or attribute",
		rawArgs: true, meta: true, run: cmdExplain, complete: completeExplain}
}

func cmdExplain(c *call) error {
	if len(c.a.pos) == 0 {
		return usagef("explain IBV_WC_RNR_RETRY_EXC_ERR, explain EINVAL, explain rtr, explain rdma_write_first, explain rkey",
			"explain what?")
	}
	var words []string
	for _, t := range c.a.pos {
		words = append(words, t.text)
	}
	topic := strings.Join(words, " ")
	found := explain(c.out, topic)
	if found == 0 {
		var names []string
		for _, s := range explainTopics() {
			names = append(names, strings.ToLower(s.Text))
		}
		norm := strings.ToLower(strings.ReplaceAll(topic, " ", "_"))
		hint := "explain knows completion statuses, errnos, QP states and types, opcodes (work request and wire), access and send flags, QP attributes, async events and a few words (rkey, psn, rnr)"
		if near := nearest(norm, names); near != "" {
			return usagef(hint, "nothing to explain for %q; did you mean %s?", topic, near)
		}
		return usagef(hint, "nothing to explain for %q", topic)
	}
	return nil
}

// explain writes every explanation whose name matches topic and returns how
// many it wrote. A number may match several (status 13, errno 13).
func explain(o *output, topic string) int {
	t := strings.TrimSpace(topic)
	up := strings.ToUpper(strings.ReplaceAll(t, " ", "_"))
	low := strings.ToLower(up)
	n := 0
	section := func(title, text string) {
		if n > 0 {
			o.add("")
		}
		o.add(title)
		o.add(wrap(text, 96))
		n++
	}
	isNum := t != "" && t[0] >= '0' && t[0] <= '9'
	numOK := func(limit int) bool {
		if !isNum {
			return true
		}
		v, err := parseUint(t, 32)
		return err == nil && int(v) < limit
	}
	// Completion statuses.
	if !strings.HasPrefix(up, "IBV_WR_") && numOK(int(verbs.WCTMRndvIncomplete)+1) {
		if st, err := verbs.ParseWCStatus(t); err == nil && st <= verbs.WCTMRndvIncomplete && (isNum || !isWCOpcodeName(up)) {
			section(fmt.Sprintf("%s (%d, %q): completion status", st, st, st.Str()), st.Explain())
		}
	}
	// Errnos.
	if e, err := verbs.ParseErrno(t); err == nil && (isNum || strings.HasPrefix(up, "E")) {
		if txt, ok := errnoText[e]; ok {
			section(fmt.Sprintf("%s (%d): errno", verbs.ErrnoName(e), int(e)), txt)
		}
	}
	if isNum {
		return n
	}
	// QP states.
	if st, err := verbs.ParseQPState(t); err == nil && st <= verbs.QPSErr && !strings.HasPrefix(up, "IBV_WC") {
		section(fmt.Sprintf("%s: QP state", st), stateText[st])
		o.add(transitionsFrom(st))
	}
	// Work request opcodes.
	if op, err := verbs.ParseWROpcode(t); err == nil && !strings.HasPrefix(up, "IBV_WC_") {
		section(fmt.Sprintf("%s (%d): work request opcode", op, op), wrOpcodeText[op])
	}
	// Completion opcodes.
	if strings.HasPrefix(up, "IBV_WC_") || !isNum {
		if op, err := verbs.ParseWCOpcode(t); err == nil && (strings.HasPrefix(up, "IBV_WC_") || up == "RECV" || up == "RECV_RDMA_WITH_IMM") {
			if txt, ok := wcOpcodeText[op]; ok {
				section(fmt.Sprintf("%s (%d): completion opcode", op, op), txt)
			}
		}
	}
	// Wire opcodes, with or without the transport.
	for _, op := range wireMatches(t) {
		section(fmt.Sprintf("%s (0x%02x): wire opcode (BTH)", op, uint8(op)), wireText(op))
	}
	// Flags.
	if a, err := verbs.ParseAccess(t); err == nil && a != 0 && a&(a-1) == 0 && !strings.Contains(t, ",") {
		if txt, ok := accessText[a]; ok {
			section(fmt.Sprintf("%s: access flag", a), txt)
		}
	}
	if f, err := verbs.ParseSendFlags(t); err == nil && f != 0 && !strings.Contains(t, ",") {
		if txt, ok := sendFlagText[f]; ok {
			section(fmt.Sprintf("%s: send flag", f), txt)
		}
	}
	// QP attributes.
	if m, err := verbs.ParseQPAttrMask(t); err == nil && len(m.Bits()) == 1 && (strings.HasPrefix(up, "IBV_QP_") || verbs.AttrHint(m) != "") {
		if h := verbs.AttrHint(m); h != "" && low != "state" {
			section(fmt.Sprintf("%s: QP attribute (modify_qp mask bit)", m), "Give it as "+h+".")
		}
	}
	// QP types.
	if qt, err := verbs.ParseQPType(t); err == nil {
		if txt, ok := qpTypeExplain[qt]; ok {
			section(fmt.Sprintf("%s (%d): QP type", qt, qt), txt)
		}
	}
	// Async events.
	if ev, err := verbs.ParseEventType(t); err == nil && ev <= verbs.EventWQFatal {
		section(fmt.Sprintf("%s (%d, %q): async event", ev, ev, ev.Str()),
			"Read it with async_events CTX. "+eventText(ev))
	}
	if txt, ok := concepts[low]; ok {
		section(low+": concept", txt)
	}
	return n
}

// isWCOpcodeName reports whether up names a completion opcode rather than a
// status (IBV_WC_SEND, IBV_WC_RECV).
func isWCOpcodeName(up string) bool {
	_, err := verbs.ParseWCOpcode(up)
	return err == nil && strings.HasPrefix(up, "IBV_WC_") && up != "IBV_WC_SUCCESS"
}

func transitionsFrom(st verbs.QPState) string {
	var lines []string
	for _, t := range []verbs.QPType{verbs.QPTypeRC, verbs.QPTypeUC, verbs.QPTypeUD} {
		var parts []string
		for _, to := range verbs.NextStates(t, st) {
			if to == st && to != verbs.QPSReset {
				continue
			}
			tr, _ := verbs.LookupTransition(t, st, to)
			p := strings.ToUpper(to.Short())
			if tr.Required != 0 {
				p += " (needs " + tr.Required.Short() + ")"
			}
			parts = append(parts, p)
		}
		if len(parts) > 0 {
			lines = append(lines, fmt.Sprintf("%s: from %s to %s", strings.ToUpper(t.Short()), strings.ToUpper(st.Short()), strings.Join(parts, ", ")))
		}
	}
	return strings.Join(lines, "\n")
}

func eventText(ev verbs.EventType) string {
	switch ev {
	case verbs.EventQPFatal, verbs.EventQPReqErr, verbs.EventQPAccessErr:
		return "The QP went to the error state; its completions say which WR failed."
	case verbs.EventCommEst:
		return "The first packet arrived on a QP in RTR."
	case verbs.EventSQDrained:
		return "A QP in SQD finished its outstanding sends."
	case verbs.EventSRQLimitReached:
		return "An SRQ armed with srq_limit fell below it: post more receives, then arm it again with modify_srq."
	case verbs.EventQPLastWQEReached:
		return "A QP with an SRQ that went to ERR will take no more receives from it."
	case verbs.EventPortActive, verbs.EventPortErr:
		return "The port changed state."
	case verbs.EventCQErr:
		return "A CQ overflowed or failed: completions were lost."
	case verbs.EventDeviceFatal:
		return "The device failed; close it."
	}
	return ""
}

// wireMatches finds wire opcodes for a name with or without the transport:
// rdma_write_first matches RC and UC RDMA_WRITE_FIRST.
func wireMatches(t string) []wire.Opcode {
	if op, err := wire.ParseOpcode(t); err == nil {
		if _, numErr := parseUint(t, 8); numErr != nil {
			return []wire.Opcode{op}
		}
	}
	var out []wire.Opcode
	for _, tr := range []string{"RC_", "UC_", "UD_"} {
		if op, err := wire.ParseOpcode(tr + strings.ReplaceAll(strings.TrimSpace(t), " ", "_")); err == nil {
			out = append(out, op)
		}
	}
	return out
}

// wireText explains a packet opcode from what verbs/wire knows about it.
func wireText(op wire.Opcode) string {
	name := op.Name()
	var what string
	switch {
	case strings.HasPrefix(name, "SEND"):
		what = "a packet of a SEND: its payload fills the receiver's next receive WQE"
		if strings.HasSuffix(name, "WITH_INVALIDATE") {
			what += "; it also invalidates the rkey in its IETH"
		}
	case strings.HasPrefix(name, "RDMA_WRITE"):
		what = "a packet of an RDMA WRITE: its payload goes straight to the responder's memory at the address of the RETH, " +
			"which the first packet carries (virtual address, rkey, total length)"
	case name == "RDMA_READ_REQUEST":
		what = "an RDMA READ request: its RETH names the remote address, rkey and length; the responder answers with READ RESPONSE packets"
	case strings.HasPrefix(name, "RDMA_READ_RESPONSE"):
		what = "a packet of the data an RDMA READ fetched, sent by the responder; the ones with an AETH also acknowledge"
	case name == "ACKNOWLEDGE":
		what = "the responder's answer: its AETH syndrome is an ACK (with credits), an RNR NAK (with the RNR timer), or a NAK " +
			"(PSN sequence error, invalid request, remote access error, remote operational error); its PSN says up to where"
	case name == "ATOMIC_ACKNOWLEDGE":
		what = "the answer to an atomic: its AtomicAckETH carries the original 8-byte value"
	case name == "COMPARE_SWAP", name == "FETCH_ADD":
		what = "an atomic request: its AtomicETH names the address, rkey and operands of an 8-byte operation"
	default:
		what = "a packet"
	}
	var pos string
	switch {
	case op.IsFirst() && op.IsLast():
		pos = "The whole message fits in this one packet."
	case op.IsFirst():
		pos = "The first packet of a message longer than the path MTU; MIDDLE packets (a full MTU each) and a LAST one follow, PSNs counting up."
	case op.IsMiddle():
		pos = "A middle packet: exactly one path MTU of payload."
	case op.IsLast():
		pos = "The last packet of a message that took several."
	}
	parts := []string{fmt.Sprintf("On %s (%s), %s.", op.Transport(), op.Transport().LongName(), what), pos}
	if strings.Contains(name, "WITH_IMMEDIATE") {
		parts = append(parts, "It carries 4 bytes of immediate data (ImmDt), reported in the receiver's completion.")
	}
	if op.ConsumesRecvWQE() {
		parts = append(parts, "It takes a receive WQE (an RNR NAK comes back on RC when there is none).")
	}
	if op.CompletesRecvWQE() {
		parts = append(parts, "It completes the receive WQE.")
	}
	hdrs := "BTH"
	if h := op.Headers(); h != 0 {
		hdrs += "+" + h.String()
	}
	parts = append(parts, fmt.Sprintf("Headers: %s, %d bytes before the payload; the 4-byte ICRC follows it.", hdrs, op.HeaderLen()))
	if wr := wrOpcodeFor(name); wr != "" {
		parts = append(parts, "Sent for "+wr+".")
	}
	return strings.Join(parts, " ")
}

func wrOpcodeFor(name string) string {
	switch {
	case strings.HasPrefix(name, "SEND") && strings.Contains(name, "IMMEDIATE"):
		return "IBV_WR_SEND_WITH_IMM"
	case strings.HasPrefix(name, "SEND") && strings.Contains(name, "INVALIDATE"):
		return "IBV_WR_SEND_WITH_INV"
	case strings.HasPrefix(name, "SEND"):
		return "IBV_WR_SEND"
	case strings.HasPrefix(name, "RDMA_WRITE") && strings.Contains(name, "IMMEDIATE"):
		return "IBV_WR_RDMA_WRITE_WITH_IMM"
	case strings.HasPrefix(name, "RDMA_WRITE"):
		return "IBV_WR_RDMA_WRITE"
	case strings.HasPrefix(name, "RDMA_READ"):
		return "IBV_WR_RDMA_READ"
	case name == "COMPARE_SWAP":
		return "IBV_WR_ATOMIC_CMP_AND_SWP"
	case name == "FETCH_ADD":
		return "IBV_WR_ATOMIC_FETCH_AND_ADD"
	}
	return ""
}

// wrap breaks text into lines of at most width columns.
func wrap(text string, width int) string {
	var lines []string
	for _, para := range strings.Split(text, "\n") {
		var cur strings.Builder
		for _, w := range strings.Fields(para) {
			if cur.Len() > 0 && cur.Len()+1+len(w) > width {
				lines = append(lines, cur.String())
				cur.Reset()
			}
			if cur.Len() > 0 {
				cur.WriteByte(' ')
			}
			cur.WriteString(w)
		}
		lines = append(lines, cur.String())
	}
	return strings.Join(lines, "\n")
}
