//go:build linux && cgo && ibverbs

#include "shim.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// norm turns the three error conventions of libibverbs and its providers
// (errno returned, -errno returned, -1 with errno set) into 0 or a positive
// errno.
static int norm(int rc, int saved_errno)
{
	if (rc == 0)
		return 0;
	if (rc == -1)
		return saved_errno ? saved_errno : EIO;
	if (rc < 0)
		return -rc;
	return rc;
}

struct ibv_device **vsh_get_device_list(int *num, int *err)
{
	struct ibv_device **list;

	errno = 0;
	list = ibv_get_device_list(num);
	*err = list ? 0 : (errno ? errno : EIO);
	return list;
}

uint64_t vsh_device_guid(struct ibv_device *dev)
{
	return be64toh(ibv_get_device_guid(dev));
}

int vsh_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
	int rc;

	errno = 0;
	rc = ibv_query_device(ctx, attr);
	return norm(rc, errno);
}

int vsh_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr)
{
	int rc;

	memset(attr, 0, sizeof(*attr));
	errno = 0;
	rc = ibv_query_port(ctx, port, attr);
	return norm(rc, errno);
}

int vsh_query_gid_ex(struct ibv_context *ctx, uint32_t port, uint32_t index, struct ibv_gid_entry *entry)
{
	int rc;

	memset(entry, 0, sizeof(*entry));
	errno = 0;
	rc = ibv_query_gid_ex(ctx, port, index, entry, 0);
	return norm(rc, errno);
}

int vsh_alloc_buf(size_t length, void **out)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = NULL;
	int rc;

	if (page <= 0)
		page = 4096;
	rc = posix_memalign(&p, (size_t)page, length ? length : 1);
	if (rc)
		return rc;
	memset(p, 0, length ? length : 1);
	*out = p;
	return 0;
}

struct ibv_mr *vsh_reg_mr(struct ibv_pd *pd, void *addr, size_t length, unsigned int access, int *err)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(pd, addr, length, access);
	*err = mr ? 0 : (errno ? errno : EIO);
	return mr;
}

struct ibv_xrcd *vsh_open_xrcd(struct ibv_context *ctx, int fd, int oflags, int *err)
{
	struct ibv_xrcd_init_attr attr;
	struct ibv_xrcd *xrcd;

	memset(&attr, 0, sizeof(attr));
	attr.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	attr.fd = fd;
	attr.oflags = oflags;
	errno = 0;
	xrcd = ibv_open_xrcd(ctx, &attr);
	*err = xrcd ? 0 : (errno ? errno : EIO);
	return xrcd;
}

int vsh_close_xrcd(struct ibv_xrcd *xrcd)
{
	int rc;

	errno = 0;
	rc = ibv_close_xrcd(xrcd);
	return norm(rc, errno);
}

struct ibv_srq *vsh_create_srq_ex(struct ibv_context *ctx, struct ibv_srq_init_attr_ex *attr, int *err)
{
	struct ibv_srq *srq;

	errno = 0;
	srq = ibv_create_srq_ex(ctx, attr);
	*err = srq ? 0 : (errno ? errno : EIO);
	return srq;
}

int vsh_get_srq_num(struct ibv_srq *srq, uint32_t *num)
{
	int rc;

	*num = 0;
	errno = 0;
	rc = ibv_get_srq_num(srq, num);
	return norm(rc, errno);
}

struct ibv_qp *vsh_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr, int *err)
{
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp_ex(ctx, attr);
	*err = qp ? 0 : (errno ? errno : EIO);
	return qp;
}

struct ibv_qp *vsh_open_qp(struct ibv_context *ctx, struct ibv_qp_open_attr *attr, int *err)
{
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_open_qp(ctx, attr);
	*err = qp ? 0 : (errno ? errno : EIO);
	return qp;
}

static int has_imm(uint32_t op)
{
	return op == IBV_WR_RDMA_WRITE_WITH_IMM || op == IBV_WR_SEND_WITH_IMM;
}

static int has_inv(uint32_t op)
{
	return op == IBV_WR_SEND_WITH_INV || op == IBV_WR_LOCAL_INV;
}

void vsh_build_send(int qp_type, const struct vsh_send *in, int n,
		    struct ibv_send_wr *wrs, struct ibv_sge *sges)
{
	size_t off = 0;
	int i;

	for (i = 0; i < n; i++) {
		const struct vsh_send *s = &in[i];
		struct ibv_send_wr *w = &wrs[i];

		memset(w, 0, sizeof(*w));
		w->wr_id = s->wr_id;
		w->next = i + 1 < n ? &wrs[i + 1] : NULL;
		w->sg_list = s->num_sge ? &sges[off] : NULL;
		w->num_sge = (int)s->num_sge;
		off += s->num_sge;
		w->opcode = (enum ibv_wr_opcode)s->opcode;
		w->send_flags = s->send_flags;
		if (has_imm(s->opcode))
			w->imm_data = htobe32(s->imm);
		else if (has_inv(s->opcode))
			w->invalidate_rkey = s->inv_rkey;
		if (qp_type == IBV_QPT_XRC_SEND)
			w->qp_type.xrc.remote_srqn = s->remote_srqn;
		if (qp_type == IBV_QPT_UD) {
			w->wr.ud.ah = s->ah;
			w->wr.ud.remote_qpn = s->remote_qpn;
			w->wr.ud.remote_qkey = s->remote_qkey;
		} else if (s->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
			   s->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			w->wr.atomic.remote_addr = s->remote_addr;
			w->wr.atomic.compare_add = s->compare_add;
			w->wr.atomic.swap = s->swap;
			w->wr.atomic.rkey = s->rkey;
		} else {
			w->wr.rdma.remote_addr = s->remote_addr;
			w->wr.rdma.rkey = s->rkey;
		}
	}
}

struct vsh_result vsh_post_send(uintptr_t qph, uintptr_t inh, int n, uintptr_t wrsh, struct ibv_sge *sges)
{
	struct ibv_qp *qp = (struct ibv_qp *)qph;
	const struct vsh_send *in = (const struct vsh_send *)inh;
	struct ibv_send_wr *wrs = (struct ibv_send_wr *)wrsh;
	struct ibv_send_wr *bad_wr = NULL;
	struct vsh_result r;
	int rc;

	vsh_build_send(qp->qp_type, in, n, wrs, sges);
	errno = 0;
	rc = ibv_post_send(qp, wrs, &bad_wr);
	r.err = norm(rc, errno);
	r.val = bad_wr ? (int)(bad_wr - wrs) : -1;
	return r;
}

static void build_recv(const struct vsh_recv *in, int n, struct ibv_recv_wr *wrs, struct ibv_sge *sges)
{
	size_t off = 0;
	int i;

	for (i = 0; i < n; i++) {
		struct ibv_recv_wr *w = &wrs[i];

		w->wr_id = in[i].wr_id;
		w->next = i + 1 < n ? &wrs[i + 1] : NULL;
		w->sg_list = in[i].num_sge ? &sges[off] : NULL;
		w->num_sge = (int)in[i].num_sge;
		off += in[i].num_sge;
	}
}

struct vsh_result vsh_post_recv(uintptr_t qph, const struct vsh_recv *in, int n, uintptr_t wrsh, struct ibv_sge *sges)
{
	struct ibv_qp *qp = (struct ibv_qp *)qph;
	struct ibv_recv_wr *wrs = (struct ibv_recv_wr *)wrsh;
	struct ibv_recv_wr *bad_wr = NULL;
	struct vsh_result r;
	int rc;

	build_recv(in, n, wrs, sges);
	errno = 0;
	rc = ibv_post_recv(qp, wrs, &bad_wr);
	r.err = norm(rc, errno);
	r.val = bad_wr ? (int)(bad_wr - wrs) : -1;
	return r;
}

struct vsh_result vsh_post_srq_recv(uintptr_t srqh, const struct vsh_recv *in, int n, uintptr_t wrsh, struct ibv_sge *sges)
{
	struct ibv_srq *srq = (struct ibv_srq *)srqh;
	struct ibv_recv_wr *wrs = (struct ibv_recv_wr *)wrsh;
	struct ibv_recv_wr *bad_wr = NULL;
	struct vsh_result r;
	int rc;

	build_recv(in, n, wrs, sges);
	errno = 0;
	rc = ibv_post_srq_recv(srq, wrs, &bad_wr);
	r.err = norm(rc, errno);
	r.val = bad_wr ? (int)(bad_wr - wrs) : -1;
	return r;
}

struct vsh_result vsh_poll_cq(uintptr_t cqh, int n, struct ibv_wc *wc)
{
	struct ibv_cq *cq = (struct ibv_cq *)cqh;
	struct vsh_result r = { 0, 0 };
	int rc;

	errno = 0;
	rc = ibv_poll_cq(cq, n, wc);
	if (rc < 0)
		r.err = norm(rc, errno);
	else
		r.val = rc;
	return r;
}

int vsh_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	int rc;

	errno = 0;
	rc = ibv_req_notify_cq(cq, solicited_only);
	return norm(rc, errno);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int vsh_set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return errno;
	return 0;
}

int vsh_wait_readable(int fd, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	struct pollfd p;
	int rc;

	for (;;) {
		int64_t left = deadline - now_ms();

		if (left < 0)
			left = 0;
		p.fd = fd;
		p.events = POLLIN;
		p.revents = 0;
		rc = poll(&p, 1, (int)left);
		if (rc > 0)
			return 0;
		if (rc == 0)
			return ETIMEDOUT;
		// The Go runtime's signals interrupt poll; go on waiting.
		if (errno != EINTR)
			return errno;
	}
}

int vsh_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq)
{
	void *cq_context = NULL;
	int rc;

	errno = 0;
	rc = ibv_get_cq_event(ch, cq, &cq_context);
	return norm(rc, errno);
}

int vsh_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev)
{
	int rc;

	memset(ev, 0, sizeof(*ev));
	errno = 0;
	rc = ibv_get_async_event(ctx, ev);
	return norm(rc, errno);
}

void vsh_ack_async_event(int type, void *element, int port)
{
	struct ibv_async_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.event_type = (enum ibv_event_type)type;
	switch (ev.event_type) {
	case IBV_EVENT_CQ_ERR:
		ev.element.cq = element;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		ev.element.srq = element;
		break;
	case IBV_EVENT_WQ_FATAL:
		ev.element.wq = element;
		break;
	case IBV_EVENT_DEVICE_FATAL:
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		ev.element.port_num = port;
		break;
	default:
		ev.element.qp = element;
		break;
	}
	ibv_ack_async_event(&ev);
}

void *vsh_async_element(const struct ibv_async_event *ev)
{
	return ev->element.qp;
}

int vsh_async_port(const struct ibv_async_event *ev)
{
	return ev->element.port_num;
}

void vsh_send_wr_fields(const struct ibv_send_wr *wr, uint64_t *remote_addr, uint32_t *rkey,
			uint64_t *compare_add, uint64_t *swap, struct ibv_ah **ah,
			uint32_t *remote_qpn, uint32_t *remote_qkey, uint32_t *imm_be, uint32_t *inv_rkey)
{
	if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		*remote_addr = wr->wr.atomic.remote_addr;
		*rkey = wr->wr.atomic.rkey;
	} else {
		*remote_addr = wr->wr.rdma.remote_addr;
		*rkey = wr->wr.rdma.rkey;
	}
	*compare_add = wr->wr.atomic.compare_add;
	*swap = wr->wr.atomic.swap;
	*ah = wr->wr.ud.ah;
	*remote_qpn = wr->wr.ud.remote_qpn;
	*remote_qkey = wr->wr.ud.remote_qkey;
	*imm_be = wr->imm_data;
	*inv_rkey = wr->invalidate_rkey;
}

uint32_t vsh_send_wr_remote_srqn(const struct ibv_send_wr *wr)
{
	return wr->qp_type.xrc.remote_srqn;
}
