package verbs

import (
	"sort"
	"strings"
)

// Path says how a verb reaches the device: through the kernel or not, and by
// which system call. The answer is not a property of the verbs API but of the
// provider library under it. VerbPaths records what rdma-core 44's rxe
// provider (providers/rxe/rxe.c) and libibverbs do on Linux 6.1, the
// soft-RoCE that vsh's simulator follows, and what a hardware provider
// (mlx5) does where that differs. docs/lab.md shows the system calls strace
// counted on rxe0.
type Path int

// Paths.
const (
	// PathCommand: a uverbs command on the device file, /dev/infiniband/uverbsN.
	// libibverbs 44 sends every command as ioctl(RDMA_VERBS_IOCTL) when the
	// kernel has the ioctl interface (device.c has_ioctl_write; Linux 6.1 has
	// it), the old write() commands wrapped in UVERBS_METHOD_INVOKE_WRITE
	// (cmd_fallback.c _execute_cmd_write). The kernel does the work and
	// returns: the control path's verbs.
	PathCommand Path = iota + 1
	// PathDoorbellWrite: the work request goes into the send queue, memory
	// shared with the device, and then the device is told to look: the
	// doorbell. On rxe the device is the kernel, so the doorbell is a system
	// call, write() of an empty IB_USER_VERBS_CMD_POST_SEND on the device file
	// (rxe.c post_send_db), once per ibv_post_send call however many work
	// requests it carries.
	PathDoorbellWrite
	// PathDoorbellMMIO: the same doorbell on hardware, a store to a device
	// page mapped into the process (mlx5: qp.c post_send_db,
	// mmio_write64_be to the UAR): no system call.
	PathDoorbellMMIO
	// PathUser: no system call. The library reads or writes a queue shared
	// with the device (rxe: rings the kernel mapped into the process when the
	// queue was created; hardware: buffers the device reads and writes by
	// DMA), or only updates its own counters.
	PathUser
	// PathEvent: read() on an event file (a completion channel, or the
	// context's async event file), which sleeps until the kernel has an event
	// to hand over.
	PathEvent
	// PathFile: system calls that are no uverbs command: opening or closing
	// the device file, reading sysfs and the provider list.
	PathFile
)

// String returns the path's name as the shell prints it.
func (p Path) String() string {
	switch p {
	case PathCommand:
		return "kernel command"
	case PathDoorbellWrite:
		return "doorbell: write()"
	case PathDoorbellMMIO:
		return "doorbell: MMIO store"
	case PathUser:
		return "user space"
	case PathEvent:
		return "event read"
	case PathFile:
		return "files"
	}
	return "unknown"
}

// EntersKernel reports whether a verb on this path makes a system call.
func (p Path) EntersKernel() bool {
	switch p {
	case PathCommand, PathDoorbellWrite, PathEvent, PathFile:
		return true
	}
	return false
}

// VerbPath is how one verb is carried out.
type VerbPath struct {
	// Verb is the libibverbs function: "ibv_post_send".
	Verb string
	// Data is set for the data path's verbs, which move data and
	// completions (posts, polls, CQ notification and its events); the
	// control path's verbs set up, query and tear down.
	Data bool
	// Path is how rdma-core 44 carries it out on rxe.
	Path Path
	// Hardware is how a hardware provider (mlx5) carries it out; zero where
	// it takes the same path as on rxe.
	Hardware Path
	// RXE names the system calls on rxe and what the kernel does in them.
	RXE string
	// HardwareNote says how mlx5 differs; empty where it does not.
	HardwareNote string
	// Source is where rdma-core 44 decides it (paths in its tree), and
	// Linux 6.1 where the kernel's part matters.
	Source string
}

// OnHardware returns the verb's path on a hardware provider (mlx5).
func (v VerbPath) OnHardware() Path {
	if v.Hardware != 0 {
		return v.Hardware
	}
	return v.Path
}

// The path of every verb vsh runs. Sources are rdma-core 44 (libibverbs/,
// providers/rxe/rxe.c, providers/mlx5/) and Linux 6.1
// (drivers/infiniband/core/umem.c, drivers/infiniband/sw/rxe/).
var verbPaths = []VerbPath{
	{Verb: "ibv_get_device_list", Path: PathFile,
		RXE:    "reads /sys/class/infiniband_verbs and /etc/libibverbs.d, loads the provider; no device file yet",
		Source: "libibverbs/init.c ibverbs_get_device_list"},
	{Verb: "ibv_open_device", Path: PathCommand,
		RXE:    "openat /dev/infiniband/uverbs0, then 3 ioctls: the ioctl-interface probe, GET_CONTEXT, the async event file",
		Source: "libibverbs/device.c verbs_open_device, has_ioctl_write; libibverbs/cmd_device.c cmd_get_context, ibv_cmd_alloc_async_fd"},
	{Verb: "ibv_close_device", Path: PathFile,
		RXE:    "close() of the device file and the async event file; the kernel frees what is left",
		Source: "libibverbs/device.c verbs_uninit_context"},
	{Verb: "ibv_query_device", Path: PathCommand,
		RXE: "ioctl (QUERY_DEVICE)", Source: "providers/rxe/rxe.c rxe_query_device; libibverbs/cmd_device.c ibv_cmd_query_device_any"},
	{Verb: "ibv_query_port", Path: PathCommand,
		RXE: "ioctl (UVERBS_METHOD_QUERY_PORT)", Source: "providers/rxe/rxe.c rxe_query_port; libibverbs/cmd_device.c ibv_cmd_query_port"},
	{Verb: "ibv_query_gid", Path: PathCommand,
		RXE: "ioctl (UVERBS_METHOD_QUERY_GID_ENTRY; sysfs on kernels without it)", Source: "libibverbs/cmd_device.c query_gid_entry"},
	{Verb: "ibv_query_gid_type", Path: PathCommand,
		RXE: "ioctl (UVERBS_METHOD_QUERY_GID_ENTRY)", Source: "libibverbs/verbs.c ibv_query_gid_type; libibverbs/cmd_device.c query_gid_entry"},
	{Verb: "ibv_get_async_event", Path: PathEvent,
		RXE: "read() on the context's async event file", Source: "libibverbs/device.c ibv_get_async_event"},
	{Verb: "ibv_ack_async_event", Path: PathUser,
		RXE: "a counter under a mutex", Source: "libibverbs/device.c ibv_ack_async_event"},
	{Verb: "ibv_alloc_pd", Path: PathCommand,
		RXE: "ioctl (ALLOC_PD)", Source: "providers/rxe/rxe.c rxe_alloc_pd; libibverbs/cmd.c ibv_cmd_alloc_pd"},
	{Verb: "ibv_dealloc_pd", Path: PathCommand,
		RXE: "ioctl (UVERBS_METHOD_PD_DESTROY)", Source: "providers/rxe/rxe.c rxe_dealloc_pd; libibverbs/cmd_pd.c ibv_cmd_dealloc_pd"},
	{Verb: "ibv_reg_mr", Path: PathCommand,
		RXE: "ioctl (REG_MR): the kernel pins every page (ib_umem_get, pin_user_pages_fast, counted against RLIMIT_MEMLOCK) " +
			"and rxe records each page's address in the MR's map (rxe_mr_init_user): the cost grows with the length",
		HardwareNote: "the kernel pins the pages the same way and writes their addresses into the device's translation table",
		Source:       "providers/rxe/rxe.c rxe_reg_mr; libibverbs/cmd.c ibv_cmd_reg_mr; Linux drivers/infiniband/core/umem.c ib_umem_get, drivers/infiniband/sw/rxe/rxe_mr.c rxe_mr_init_user"},
	{Verb: "ibv_dereg_mr", Path: PathCommand,
		RXE: "ioctl (UVERBS_METHOD_MR_DESTROY): the kernel unpins the pages", Source: "providers/rxe/rxe.c rxe_dereg_mr; libibverbs/cmd_mr.c ibv_cmd_dereg_mr"},
	{Verb: "ibv_create_comp_channel", Path: PathCommand,
		RXE: "ioctl (CREATE_COMP_CHANNEL), which returns the channel's event file", Source: "libibverbs/verbs.c ibv_create_comp_channel"},
	{Verb: "ibv_destroy_comp_channel", Path: PathFile,
		RXE: "close() of the channel's event file", Source: "libibverbs/verbs.c ibv_destroy_comp_channel"},
	{Verb: "ibv_create_cq", Path: PathCommand,
		RXE:          "ioctl (UVERBS_METHOD_CQ_CREATE), then mmap() of the CQ ring the kernel allocated",
		HardwareNote: "mlx5 allocates the CQ buffer in the process and hands its address to the command",
		Source:       "providers/rxe/rxe.c rxe_create_cq; libibverbs/cmd_cq.c ibv_icmd_create_cq"},
	{Verb: "ibv_resize_cq", Path: PathCommand,
		RXE: "ioctl (RESIZE_CQ), munmap() of the old ring, mmap() of the new one", Source: "providers/rxe/rxe.c rxe_resize_cq"},
	{Verb: "ibv_destroy_cq", Path: PathCommand,
		RXE: "ioctl (UVERBS_METHOD_CQ_DESTROY), munmap() of the ring", Source: "providers/rxe/rxe.c rxe_destroy_cq; libibverbs/cmd_cq.c ibv_cmd_destroy_cq"},
	{Verb: "ibv_req_notify_cq", Data: true, Path: PathCommand, Hardware: PathDoorbellMMIO,
		RXE:          "ioctl (REQ_NOTIFY_CQ): rxe arms the CQ in the kernel",
		HardwareNote: "no system call: mlx5 writes the arm request to the CQ's doorbell record and the UAR page (mlx5_arm_cq)",
		Source:       "providers/rxe/rxe.c rxe_ctx_ops.req_notify_cq = ibv_cmd_req_notify_cq"},
	{Verb: "ibv_get_cq_event", Data: true, Path: PathEvent,
		RXE: "read() on the channel's event file: sleeps until an armed CQ gets a completion", Source: "libibverbs/verbs.c ibv_get_cq_event"},
	{Verb: "ibv_ack_cq_events", Data: true, Path: PathUser,
		RXE: "a counter under a mutex", Source: "libibverbs/verbs.c ibv_ack_cq_events"},
	{Verb: "ibv_poll_cq", Data: true, Path: PathUser,
		RXE:          "copies completions out of the CQ ring mapped at create time and moves its consumer index",
		HardwareNote: "the same idea: mlx5 reads CQEs from its buffer and updates a doorbell record in host memory",
		Source:       "providers/rxe/rxe.c rxe_poll_cq"},
	{Verb: "ibv_create_qp", Path: PathCommand,
		RXE:          "ioctl (CREATE_QP), then mmap() of the send queue and of the receive queue (none with an SRQ)",
		HardwareNote: "mlx5 allocates the queues in the process and maps a UAR page for doorbells",
		Source:       "providers/rxe/rxe.c rxe_create_qp, map_queue_pair"},
	{Verb: "ibv_modify_qp", Path: PathCommand,
		RXE: "ioctl (MODIFY_QP)", Source: "providers/rxe/rxe.c rxe_modify_qp; libibverbs/cmd.c ibv_cmd_modify_qp"},
	{Verb: "ibv_query_qp", Path: PathCommand,
		RXE: "ioctl (QUERY_QP)", Source: "providers/rxe/rxe.c rxe_query_qp; libibverbs/cmd.c ibv_cmd_query_qp"},
	{Verb: "ibv_destroy_qp", Path: PathCommand,
		RXE: "ioctl (DESTROY_QP), munmap() of the queues", Source: "providers/rxe/rxe.c rxe_destroy_qp"},
	{Verb: "ibv_create_srq", Path: PathCommand,
		RXE: "ioctl (CREATE_SRQ), then mmap() of the SRQ ring", Source: "providers/rxe/rxe.c rxe_create_srq"},
	{Verb: "ibv_modify_srq", Path: PathCommand,
		RXE: "ioctl (MODIFY_SRQ); a new max_wr also remaps the ring", Source: "providers/rxe/rxe.c rxe_modify_srq"},
	{Verb: "ibv_query_srq", Path: PathCommand,
		RXE: "ioctl (QUERY_SRQ)", Source: "providers/rxe/rxe.c rxe_query_srq"},
	{Verb: "ibv_destroy_srq", Path: PathCommand,
		RXE: "ioctl (DESTROY_SRQ), munmap() of the ring", Source: "providers/rxe/rxe.c rxe_destroy_srq"},
	{Verb: "ibv_post_srq_recv", Data: true, Path: PathUser,
		RXE: "writes the WQE into the SRQ ring; the kernel's responder finds it when a SEND arrives", Source: "providers/rxe/rxe.c rxe_post_srq_recv"},
	{Verb: "ibv_open_xrcd", Path: PathUser, Hardware: PathCommand,
		RXE:          "no system call: rxe's provider has no open_xrcd, so libibverbs' dummy op fails with EOPNOTSUPP",
		HardwareNote: "mlx5: ioctl (OPEN_XRCD) with the descriptor of the domain's file; the kernel finds the domain by the file's inode",
		Source:       "libibverbs/dummy_ops.c open_xrcd; libibverbs/cmd_xrcd.c ibv_cmd_open_xrcd; Linux drivers/infiniband/core/uverbs_cmd.c ib_uverbs_open_xrcd"},
	{Verb: "ibv_close_xrcd", Path: PathUser, Hardware: PathCommand,
		RXE:          "never reached on rxe: no domain can be opened",
		HardwareNote: "mlx5: ioctl (CLOSE_XRCD)",
		Source:       "libibverbs/cmd_xrcd.c ibv_cmd_close_xrcd"},
	{Verb: "ibv_create_srq_ex", Path: PathCommand,
		RXE:    "ioctl (CREATE_XSRQ), then mmap() of the SRQ ring; libibverbs refuses an XRC SRQ without a domain or CQ before that",
		Source: "providers/rxe/rxe.c rxe_create_srq_ex; libibverbs/cmd_srq.c ibv_icmd_create_srq"},
	{Verb: "ibv_get_srq_num", Path: PathUser,
		RXE:          "no system call: rxe's provider has no get_srq_num, so libibverbs answers EOPNOTSUPP",
		HardwareNote: "mlx5 reads the number it keeps in the SRQ (mlx5_get_srq_num)",
		Source:       "libibverbs/verbs.h ibv_get_srq_num; providers/mlx5/verbs.c mlx5_get_srq_num"},
	{Verb: "ibv_create_qp_ex", Path: PathCommand,
		RXE:    "ioctl (CREATE_QP) as ibv_create_qp (with only a PD in comp_mask libibverbs calls ibv_create_qp); rxe refuses the XRC types",
		Source: "libibverbs/verbs.h ibv_create_qp_ex; libibverbs/cmd_qp.c create_qp_ex_common"},
	{Verb: "ibv_open_qp", Path: PathUser, Hardware: PathCommand,
		RXE:          "no system call: rxe's provider has no open_qp, so libibverbs' dummy op fails with EOPNOTSUPP",
		HardwareNote: "mlx5: ioctl (OPEN_QP): the kernel finds the XRC_TGT QP in the domain (ib_open_qp)",
		Source:       "libibverbs/dummy_ops.c open_qp; libibverbs/cmd.c ibv_cmd_open_qp"},
	{Verb: "ibv_create_ah", Path: PathCommand,
		RXE: "ioctl (CREATE_AH): the kernel gives the AH an index that UD sends carry", Source: "providers/rxe/rxe.c rxe_create_ah"},
	{Verb: "ibv_destroy_ah", Path: PathCommand,
		RXE: "ioctl (UVERBS_METHOD_AH_DESTROY)", Source: "providers/rxe/rxe.c rxe_destroy_ah; libibverbs/cmd_ah.c ibv_cmd_destroy_ah"},
	{Verb: "ibv_attach_mcast", Path: PathCommand,
		RXE: "ioctl (ATTACH_MCAST)", Source: "providers/rxe/rxe.c rxe_ctx_ops.attach_mcast = ibv_cmd_attach_mcast"},
	{Verb: "ibv_detach_mcast", Path: PathCommand,
		RXE: "ioctl (DETACH_MCAST)", Source: "providers/rxe/rxe.c rxe_ctx_ops.detach_mcast = ibv_cmd_detach_mcast"},
	{Verb: "ibv_post_send", Data: true, Path: PathDoorbellWrite, Hardware: PathDoorbellMMIO,
		RXE: "writes each WQE into the send queue ring, then one write() on the device file per call: in it the kernel " +
			"runs rxe's requester (rxe_post_send, rxe_run_task), which builds and sends the packets",
		HardwareNote: "no system call: mlx5 rings the doorbell with a store to the UAR page (mmio_write64_be, or a BlueFlame copy)",
		Source:       "providers/rxe/rxe.c rxe_post_send, post_send_db; providers/mlx5/qp.c post_send_db"},
	{Verb: "ibv_post_recv", Data: true, Path: PathUser,
		RXE:          "writes the WQE into the receive queue ring; the kernel's responder finds it when a SEND arrives",
		HardwareNote: "the same: mlx5 writes the WQE and a doorbell record in host memory, with no MMIO store",
		Source:       "providers/rxe/rxe.c rxe_post_recv"},
}

// VerbPaths returns the path of every verb vsh runs, sorted by verb name.
func VerbPaths() []VerbPath {
	out := append([]VerbPath(nil), verbPaths...)
	sort.Slice(out, func(i, j int) bool { return out[i].Verb < out[j].Verb })
	return out
}

// PathOf returns how a verb ("ibv_post_send", or "post_send") is carried out.
func PathOf(verb string) (VerbPath, bool) {
	if !strings.HasPrefix(verb, "ibv_") {
		verb = "ibv_" + verb
	}
	for _, p := range verbPaths {
		if p.Verb == verb {
			return p, true
		}
	}
	return VerbPath{}, false
}
