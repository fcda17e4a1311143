//go:build linux && cgo && ibverbs

// shim.h declares the small C helpers the Go side of verbs/ibverbs calls.
// They exist for three reasons: cgo cannot call libibverbs' macros
// (ibv_query_port, ibv_reg_mr) nor reach union members (ibv_send_wr.wr.rdma),
// and the data path must cross into C once per batch, not once per work
// request. Every helper returns 0 or a positive errno.

#ifndef VSH_IBVERBS_SHIM_H
#define VSH_IBVERBS_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

// vsh_send is one send work request in a flat form the Go side fills
// without touching unions. vsh_post_send turns an array of them into an
// ibv_send_wr chain.
struct vsh_send {
	uint64_t wr_id;
	uint64_t remote_addr;
	uint64_t compare_add;
	uint64_t swap;
	struct ibv_ah *ah;
	uint32_t num_sge;
	uint32_t opcode;
	uint32_t send_flags;
	uint32_t imm;        // host order; stored big-endian in imm_data
	uint32_t inv_rkey;
	uint32_t rkey;
	uint32_t remote_qpn;
	uint32_t remote_qkey;
	uint32_t remote_srqn; // XRC_SEND: qp_type.xrc.remote_srqn
	uint32_t pad;
};

// vsh_recv is one receive work request in flat form.
struct vsh_recv {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t pad;
};

// The device list.
struct ibv_device **vsh_get_device_list(int *num, int *err);
uint64_t vsh_device_guid(struct ibv_device *dev);

// Queries.
int vsh_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr);
int vsh_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr);
int vsh_query_gid_ex(struct ibv_context *ctx, uint32_t port, uint32_t index, struct ibv_gid_entry *entry);

// Registered memory outside the Go heap.
int vsh_alloc_buf(size_t length, void **out);
struct ibv_mr *vsh_reg_mr(struct ibv_pd *pd, void *addr, size_t length, unsigned int access, int *err);

// vsh_result is what a data-path helper returns by value, so that the Go
// side passes no pointer to its own memory (which would make it escape to
// the heap): err is 0 or an errno, val the helper's number.
struct vsh_result {
	int err;
	int val;
};

// The data path: one call per batch. For posts, val is the index of
// bad_wr, or -1; for polls, the number of completions. The verbs object
// and the buffers that hold pointers (C memory all) are passed as
// uintptr_t: cgo would check a pointer to a struct with pointers in it as
// a possible Go pointer on every call.
struct vsh_result vsh_post_send(uintptr_t qp, uintptr_t in /* const struct vsh_send * */, int n,
				uintptr_t wrs /* struct ibv_send_wr * */, struct ibv_sge *sges);
struct vsh_result vsh_post_recv(uintptr_t qp, const struct vsh_recv *in, int n,
				uintptr_t wrs /* struct ibv_recv_wr * */, struct ibv_sge *sges);
struct vsh_result vsh_post_srq_recv(uintptr_t srq, const struct vsh_recv *in, int n,
				    uintptr_t wrs /* struct ibv_recv_wr * */, struct ibv_sge *sges);
struct vsh_result vsh_poll_cq(uintptr_t cq, int n, struct ibv_wc *wc);
int vsh_req_notify_cq(struct ibv_cq *cq, int solicited_only);

// Events. The channel and async fds are made non-blocking, so that reading
// with no event pending gives EAGAIN instead of sleeping; vsh_wait_readable
// waits up to timeout_ms for one (poll(2), restarted after EINTR) and
// returns ETIMEDOUT when none came.
int vsh_set_nonblock(int fd);
int vsh_wait_readable(int fd, int timeout_ms);
int vsh_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq);
int vsh_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev);
void vsh_ack_async_event(int type, void *element, int port);

// Accessors for the anonymous unions Go cannot name.
void *vsh_async_element(const struct ibv_async_event *ev);
int vsh_async_port(const struct ibv_async_event *ev);

// The extended verbs of XRC (verbs.h's static inlines over struct
// verbs_context). The object-returning ones report the errno in *err.
struct ibv_xrcd *vsh_open_xrcd(struct ibv_context *ctx, int fd, int oflags, int *err);
int vsh_close_xrcd(struct ibv_xrcd *xrcd);
struct ibv_srq *vsh_create_srq_ex(struct ibv_context *ctx, struct ibv_srq_init_attr_ex *attr, int *err);
int vsh_get_srq_num(struct ibv_srq *srq, uint32_t *num);
struct ibv_qp *vsh_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr, int *err);
struct ibv_qp *vsh_open_qp(struct ibv_context *ctx, struct ibv_qp_open_attr *attr, int *err);

// Test support: read back what vsh_post_send would hand libibverbs, without
// posting (the pure conversion, checked on machines with no RDMA device).
void vsh_build_send(int qp_type, const struct vsh_send *in, int n,
		    struct ibv_send_wr *wrs, struct ibv_sge *sges);
void vsh_send_wr_fields(const struct ibv_send_wr *wr, uint64_t *remote_addr, uint32_t *rkey,
			uint64_t *compare_add, uint64_t *swap, struct ibv_ah **ah,
			uint32_t *remote_qpn, uint32_t *remote_qkey, uint32_t *imm_be, uint32_t *inv_rkey);
uint32_t vsh_send_wr_remote_srqn(const struct ibv_send_wr *wr);

#endif
