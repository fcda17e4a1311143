package ibverbs

import (
	"fmt"
	"strings"
	"syscall"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/rules"
)

// This file explains an errno that libibverbs returned. It is pure Go, so
// that it is tested on every machine.
//
// A call is judged in two steps. Before it, the rules of predict.go say what
// the kernel (Linux 6.1 rxe) and libibverbs (rdma-core 44) will do with it: a
// list of reasons it will fail, each certain or not. After it, judge compares
// that with what libibverbs returned. A matching reason becomes the error's
// Why and Hint; otherwise the (verb, errno) table below explains the errno in
// general terms, and, when the rules claimed to know, the mismatch is a
// misprediction: said in the error and counted.

// reason is one way a call is expected to fail.
type reason struct {
	errno   syscall.Errno
	why     string
	hint    string
	certain bool // false: the rules cannot tell (a queue's fill level, memory, routes)
	// queued: the provider had queued the batch's WRs before this refusal
	// (rxe's doorbell), so they count as posted.
	queued bool
}

// prediction is what the rules expect of one call.
type prediction struct {
	reasons []reason
	// exhaustive says the certain reasons cover every way the call can fail
	// except the uncertain ones: then an unexpected errno is a misprediction.
	exhaustive bool
	// call describes the call's arguments for the misprediction log.
	call string
}

func (p *prediction) fail(errno syscall.Errno, hint, why string, args ...any) {
	if len(args) > 0 {
		why = fmt.Sprintf(why, args...)
	}
	p.reasons = append(p.reasons, reason{errno: errno, why: why, hint: hint, certain: true})
}

func (p *prediction) maybe(errno syscall.Errno, hint, why string, args ...any) {
	if len(args) > 0 {
		why = fmt.Sprintf(why, args...)
	}
	p.reasons = append(p.reasons, reason{errno: errno, why: why, hint: hint})
}

// certain returns the first certain reason, if any.
func (p *prediction) certain() (reason, bool) {
	for _, r := range p.reasons {
		if r.certain {
			return r, true
		}
	}
	return reason{}, false
}

// expected describes what the rules predicted, for messages.
func (p *prediction) expected() string {
	if r, ok := p.certain(); ok {
		return verbs.ErrnoName(r.errno) + " (" + r.why + ")"
	}
	return "success"
}

// judge compares libibverbs' answer (errno 0 for success) with the
// prediction. It returns nil on success, else the explained *verbs.Error.
//
// The reasons are in the order the kernel checks them, so the answer must be
// the first reason that applies: walking the list, an uncertain reason with
// another errno may not have applied and is passed over, but a certain one
// would have stopped the kernel there. Reaching a certain reason with another
// errno, or no reason at all when the rules are exhaustive, is a
// misprediction.
func judge(op string, errno syscall.Errno, p prediction) error {
	if errno == 0 {
		if r, ok := p.certain(); ok {
			recordMisprediction(Misprediction{Op: op, Predicted: verbs.ErrnoName(r.errno) + ": " + r.why, Got: "success", Call: p.call})
		}
		return nil
	}
	var match *reason
	blocked := false // a certain reason with another errno came first
	for i := range p.reasons {
		r := &p.reasons[i]
		if r.errno == errno {
			match = r
			break
		}
		if r.certain {
			blocked = true
		}
	}
	var why, hint string
	if match != nil {
		why, hint = match.why, match.hint
		// Name the other certain reasons with the same errno: the learner
		// will meet them next.
		var also []string
		for _, r := range p.reasons {
			if r.certain && r.errno == errno && r.why != match.why {
				also = append(also, r.why)
			}
		}
		if len(also) > 0 {
			why += "; also: " + strings.Join(also, "; ")
		}
	} else {
		why, hint = explainErrno(op, errno)
	}
	_, anyCertain := p.certain()
	if blocked || (match == nil && (anyCertain || p.exhaustive)) {
		predicted := p.expected()
		recordMisprediction(Misprediction{Op: op, Predicted: predicted, Got: verbs.ErrnoName(errno), Call: p.call})
		why += fmt.Sprintf(" [misprediction: vsh's rules for %s predicted %s, but libibverbs returned %s; that is a bug "+
			"in the shared transition table (verbs.CheckTransition), in verbs/ibverbs' rules, or in the simulator that follows "+
			"them — counted by ibverbs.Mispredictions]", op, predicted, verbs.ErrnoName(errno))
	}
	return &verbs.Error{Op: op, Errno: errno, Why: why, Hint: hint}
}

// refuse builds the error for an input vsh refuses before calling
// libibverbs, because libibverbs would crash or hang on it.
func refuse(op string, errno syscall.Errno, hint, why string, args ...any) error {
	if len(args) > 0 {
		why = fmt.Sprintf(why, args...)
	}
	return &verbs.Error{Op: op, Errno: errno, Why: why + " (refused by vsh before calling libibverbs)", Hint: hint}
}

type errnoKey struct {
	op    string
	errno syscall.Errno
}

type explanation struct{ why, hint string }

// errnoTable is the (verb, errno) table: what an errno from a verb means on
// Linux 6.1 rxe with rdma-core 44, in general terms. Each line names the
// kernel or rdma-core function that returns it.
var errnoTable = map[errnoKey]explanation{
	{"ibv_get_device_list", syscall.ENOSYS}: {"the kernel has no RDMA support (no ib_uverbs: /sys/class/infiniband is missing)",
		"run inside the soft-RoCE lab (rxe-lab run -- ...) or load rdma_rxe and add a device: rdma link add rxe0 type rxe netdev <if>"},
	{"ibv_open_device", syscall.EACCES}: {"/dev/infiniband/uverbsN cannot be opened by this user",
		"give the user access to /dev/infiniband (the rdma group) or run as root"},
	{"ibv_open_device", syscall.EPERM}: {"/dev/infiniband/uverbsN cannot be opened by this user",
		"give the user access to /dev/infiniband (the rdma group) or run as root"},
	{"ibv_open_device", syscall.ENODEV}:  {"the device went away (rdma link delete, or the netdev was removed)", "list the devices again"},
	{"ibv_query_device", syscall.EINVAL}: {"the device refused the query", ""},
	{"ibv_query_port", syscall.EINVAL}: {"the port does not exist (ib_query_port: rdma_is_port_valid); ports are numbered from 1",
		"use port 1: rxe devices have one port"},
	{"ibv_query_gid", syscall.EINVAL}: {"the port does not exist or the index is outside the GID table (rdma_query_gid)",
		"GID indexes run from 0 to gid_tbl_len-1 (query_port shows it); rxe fills 0 (link-local) and 1 (IPv4-mapped)"},
	{"ibv_query_gid_type", syscall.EINVAL}: {"the port does not exist or the index is outside the GID table (rdma_query_gid)",
		"GID indexes run from 0 to gid_tbl_len-1 (query_port shows it)"},
	{"ibv_query_gid_type", errENODATA}: {"that GID slot is empty (rdma_get_gid_attr)",
		"use an index the GID table fills: ibv_devinfo -v lists them"},
	{"ibv_alloc_pd", syscall.ENOMEM}: {"the kernel could not allocate the PD (max_pd reached or out of memory)", "deallocate unused PDs"},
	{"ibv_dealloc_pd", syscall.EBUSY}: {"objects still use the PD (uverbs_free_pd: pd->usecnt counts its MRs, QPs, SRQs and AHs)",
		"destroy the QPs, SRQs and AHs and deregister the MRs on it first"},
	{"posix_memalign", syscall.ENOMEM}: {"the memory to register could not be allocated", "ask for less"},
	{"posix_memalign", syscall.EINVAL}: {"the length cannot be allocated", "ask for a positive length"},
	{"ibv_reg_mr", syscall.EINVAL}: {"the kernel refused the registration: bad access flags (remote write or remote atomic without local write, " +
		"an undefined bit, on-demand paging, which rxe 6.1 lacks) or length 0 (ib_check_mr_access, ib_umem_get)",
		"add local_write to remote_write/remote_atomic, drop undefined flags, register at least one byte"},
	{"ibv_reg_mr", syscall.ENOMEM}: {"the memory cannot be pinned: the locked-memory limit (RLIMIT_MEMLOCK, ulimit -l) is smaller than the registration, " +
		"or the kernel is out of memory (ib_umem_get)",
		"raise the limit (ulimit -l unlimited, or memlock in /etc/security/limits.conf) or register less"},
	{"ibv_reg_mr", syscall.EFAULT}:              {"the address range is not mapped (ib_umem_get could not pin it)", ""},
	{"ibv_reg_mr", syscall.EOPNOTSUPP}:          {"the device does not support an access flag asked for (on-demand paging on rxe)", "drop the flag"},
	{"ibv_reg_mr", syscall.EPERM}:               {"pinning memory needs more than the locked-memory limit allows this process", "raise ulimit -l"},
	{"ibv_dereg_mr", syscall.EINVAL}:            {"memory windows are still bound to the MR (rxe_dereg_mr, IBA 10.6.7.2.6)", "invalidate or free the memory windows first"},
	{"ibv_dereg_mr", syscall.EBUSY}:             {"the MR is still in use", "destroy what uses it first"},
	{"ibv_create_comp_channel", syscall.EMFILE}: {"the process has no file descriptor left for the channel", "close unused channels or raise ulimit -n"},
	{"ibv_destroy_comp_channel", syscall.EBUSY}: {"CQs still use the channel (libibverbs counts them in channel->refcnt)", "destroy the CQs on it first"},
	{"ibv_create_cq", syscall.EINVAL}: {"cqe is not in 1..max_cqe (rxe_cq_chk_attr) or comp_vector is not below num_comp_vectors",
		"ask for 1 to 32767 entries on rxe, and comp_vector 0"},
	{"ibv_create_cq", syscall.ENOMEM}: {"the kernel could not allocate the CQ's queue", "ask for fewer entries"},
	{"ibv_resize_cq", syscall.EINVAL}: {"cqe is not in 1..max_cqe, or smaller than the completions the CQ holds now (rxe_cq_chk_attr)",
		"poll the CQ first or ask for more entries"},
	{"ibv_resize_cq", syscall.ENOMEM}: {"the kernel could not allocate the new queue", "ask for fewer entries"},
	{"ibv_destroy_cq", syscall.EBUSY}: {"a QP still uses the CQ as its send or receive CQ (ib_destroy_cq_user: cq->usecnt)",
		"destroy the QPs first"},
	{"ibv_req_notify_cq", syscall.EINVAL}:   {"the CQ cannot be armed", ""},
	{"ibv_poll_cq", syscall.EINVAL}:         {"the CQ cannot be polled", ""},
	{"ibv_get_cq_event", syscall.EAGAIN}:    {"no completion event arrived in time", "arm the CQ with req_notify_cq before waiting, and post work that completes"},
	{"ibv_get_async_event", syscall.EAGAIN}: {"no async event is pending", ""},
	{"ibv_create_qp", syscall.EINVAL}: {"the capabilities exceed the device's limits (rxe_qp_chk_cap: max_send_wr/max_recv_wr above max_qp_wr, " +
		"more than 32 SGEs, max_inline_data above 512), a CQ is missing, or the type needs attributes this call cannot give",
		"ask for less: query_device shows the limits"},
	{"ibv_create_qp", syscall.EOPNOTSUPP}: {"rxe does not implement this QP type (rxe_qp_chk_init: only RC, UC and UD)", "use rc, uc or ud"},
	{"ibv_create_qp", syscall.EPERM}:      {"a raw packet QP needs CAP_NET_RAW", "run as root, or use rc, uc or ud"},
	{"ibv_create_qp", syscall.ENOMEM}:     {"the kernel could not allocate the queues", "ask for smaller queues"},
	{"ibv_modify_qp", syscall.EINVAL}: {"the kernel refused the attributes or the transition (ib_modify_qp_is_ok, rxe_qp_chk_attr)",
		"check the transition's required and optional attributes: explain modify_qp"},
	{"ibv_modify_qp", syscall.EPERM}: {"a Q_Key with the high bit set is privileged (needs CAP_NET_RAW)", "use a Q_Key below 0x80000000"},
	{"ibv_modify_qp", syscall.EOPNOTSUPP}: {"an attribute needs the extended modify command, which rxe lacks (IBV_QP_RATE_LIMIT and above)",
		"drop the attribute"},
	{"ibv_modify_qp", errENODATA}: {"the AV's sgid_index names an empty GID slot (rdma_get_gid_attr)",
		"use the GID index of your RoCE v2 address (1 on rxe with one IPv4 address)"},
	{"ibv_modify_qp", syscall.ENOMEM}: {"the kernel could not allocate the QP's responder resources", "ask for a smaller max_dest_rd_atomic"},
	{"ibv_query_qp", syscall.EINVAL}:  {"the QP cannot be queried", ""},
	{"ibv_destroy_qp", syscall.EBUSY}: {"the QP is still attached to a multicast group (uverbs_free_qp)", "detach_mcast first"},
	{"ibv_post_send", syscall.EINVAL}: {"a work request is malformed (more SGEs than max_send_sge, an atomic not 8 bytes or not 8-byte aligned, " +
		"inline data beyond max_inline_data) or the QP is not yet in RTS (the kernel refuses the doorbell)",
		"bring the QP to RTS first; check the WR against query_qp's caps"},
	{"ibv_post_send", syscall.ENOMEM}: {"the send queue is full: every slot holds a WR not yet completed", "poll the CQ to retire completed WRs, or create the QP with a larger max_send_wr"},
	{"ibv_post_recv", syscall.EINVAL}: {"the QP is in RESET, uses an SRQ, or a WR has more SGEs than max_recv_sge",
		"move the QP to INIT first; post to its SRQ instead"},
	{"ibv_post_recv", syscall.ENOMEM}:     {"the receive queue is full", "wait for receives to complete, or create the QP with a larger max_recv_wr"},
	{"ibv_post_srq_recv", syscall.EINVAL}: {"a WR has more SGEs than the SRQ's max_sge", "post fewer SGEs"},
	{"ibv_post_srq_recv", syscall.ENOMEM}: {"the SRQ is full", "wait for receives to complete, or resize it with modify_srq max_wr"},
	{"ibv_create_srq", syscall.EINVAL}: {"max_wr is 0 or above max_srq_wr, or max_sge is above max_srq_sge (rxe_srq_chk_init)",
		"ask for 1 to max_srq_wr entries and at most max_srq_sge SGEs (query_device)"},
	{"ibv_modify_srq", syscall.EINVAL}: {"srq_limit is above max_wr, or the new max_wr is 0, above the device limit, or below the armed limit (rxe_srq_chk_attr)",
		"keep 0 < srq_limit <= max_wr"},
	{"ibv_query_srq", syscall.EINVAL}:  {"the SRQ cannot be queried", ""},
	{"ibv_destroy_srq", syscall.EBUSY}: {"a QP still uses the SRQ (ib_destroy_srq_user: srq->usecnt)", "destroy the QPs on it first"},
	{"ibv_create_ah", syscall.EINVAL}: {"the address is incomplete: the port does not exist, the GRH is missing (mandatory on RoCE: rdma_check_ah_attr) " +
		"or sgid_index is outside the GID table", "give is_global=1, a dgid, sgid_index of your RoCE v2 GID and port 1"},
	{"ibv_create_ah", errENODATA}:        {"sgid_index names an empty GID slot (rdma_get_gid_attr)", "use the index of a filled GID (ibv_devinfo -v)"},
	{"ibv_destroy_ah", syscall.EINVAL}:   {"the AH cannot be destroyed", ""},
	{"ibv_attach_mcast", syscall.EINVAL}: {"the GID is not a multicast address or the QP is not UD (ib_attach_mcast)", "use a UD QP and an ff00::/8 GID"},
	{"ibv_detach_mcast", syscall.EINVAL}: {"the QP is not attached to that group (ib_uverbs_detach_mcast)", "detach only what attach_mcast attached"},
	{"ibv_close_device", syscall.EINVAL}: {"the context cannot be closed", ""},
	{"ibv_open_xrcd", syscall.EOPNOTSUPP}: {"the device has no XRC: its provider registers no open_xrcd (rxe's does not), " +
		"so libibverbs' dummy op answers EOPNOTSUPP (libibverbs/dummy_ops.c)", xrcHint},
	{"ibv_open_xrcd", syscall.EAGAIN}: {"the file names no XRC domain yet, and O_CREAT is not set (ib_uverbs_open_xrcd)", "pass O_CREAT to create the domain"},
	{"ibv_open_xrcd", syscall.EINVAL}: {"the file already names an XRC domain and O_EXCL asks for a new one (ib_uverbs_open_xrcd)",
		"drop O_EXCL to share the domain, or use another file"},
	{"ibv_open_xrcd", syscall.EBADF}: {"the file descriptor naming the domain is not open (ib_uverbs_open_xrcd: fdget)", "open the file first, or pass no file"},
	{"ibv_close_xrcd", syscall.EBUSY}: {"XRC SRQs or XRC_RECV QPs made or opened through this handle still exist (uverbs_free_xrcd: refcnt)",
		"destroy them first"},
	{"ibv_create_srq_ex", syscall.EINVAL}: {"the SRQ has no PD, an XRC SRQ lacks its XRC domain or CQ, a tag-matching SRQ lacks its tags " +
		"(libibverbs ibv_cmd_create_srq_ex, ibv_icmd_create_srq), or max_wr/max_sge are out of range (rxe_srq_chk_init)",
		"give every SRQ a PD, an XRC SRQ an XRC domain and a CQ, and 1 to max_srq_wr entries"},
	{"ibv_create_srq_ex", syscall.EOPNOTSUPP}: {"the device does not have this SRQ type (rxe: IBV_SRQT_BASIC only)", xrcHint},
	{"ibv_get_srq_num", syscall.EOPNOTSUPP}: {"the provider has no get_srq_num (rxe has no XRC), so libibverbs answers EOPNOTSUPP (verbs.h ibv_get_srq_num)",
		xrcHint},
	{"ibv_create_qp_ex", syscall.EINVAL}: {"an XRC_RECV QP lacks its XRC domain, another type its PD (libibverbs ibv_icmd_create_qp), " +
		"or the capabilities exceed the device's limits (rxe_qp_chk_cap)",
		"make XRC_RECV QPs with xrcd=, other types with a PD; query_device shows the limits"},
	{"ibv_create_qp_ex", syscall.EOPNOTSUPP}: {"the device does not implement this QP type or comp_mask field (rxe: RC, UC and UD with a PD only)",
		"use rc, uc or ud; " + xrcHint},
	{"ibv_open_qp", syscall.EOPNOTSUPP}: {"the provider has no open_qp (rxe has no XRC), so libibverbs' dummy op answers EOPNOTSUPP", xrcHint},
	{"ibv_open_qp", syscall.EINVAL}: {"the XRC domain has no XRC_RECV QP of that number, or the type is not XRC_RECV (ib_open_qp)",
		"open an XRC_RECV QP made in the same domain, by its number"},
}

// errENODATA is Linux's ENODATA (61); verbs reports Linux numbers.
const errENODATA = rules.ENODATA

// generic explains errnos no verb-specific line covers.
var generic = map[syscall.Errno]explanation{
	syscall.EINVAL:     {"the kernel or the provider refused an argument", ""},
	syscall.ENOMEM:     {"out of memory or out of queue space", ""},
	syscall.EBUSY:      {"the object is still in use", "destroy what depends on it first"},
	syscall.EOPNOTSUPP: {"the device does not support this", ""},
	syscall.EPERM:      {"the process lacks a privilege the call needs", ""},
	syscall.EACCES:     {"access denied", ""},
	syscall.EFAULT:     {"an address was not accessible to the kernel", ""},
	syscall.ENOSYS:     {"the kernel does not implement this", ""},
	syscall.ENODEV:     {"the device is gone", ""},
	syscall.EIO:        {"the device or the kernel failed the request", ""},
	syscall.EAGAIN:     {"nothing is available now", ""},
	syscall.ETIMEDOUT:  {"the kernel gave up waiting (address resolution)", "check that the dgid is reachable"},
	errENODATA:         {"no data for that index (empty slot)", ""},
}

// explainErrno returns the table's explanation of errno from op.
func explainErrno(op string, errno syscall.Errno) (why, hint string) {
	if e, ok := errnoTable[errnoKey{op, errno}]; ok {
		return e.why, e.hint
	}
	if e, ok := generic[errno]; ok {
		return e.why, e.hint
	}
	return "libibverbs returned " + verbs.ErrnoName(errno), ""
}
