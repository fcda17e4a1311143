//go:build linux && cgo && ibverbs

/*
 * The verbs the simulator implements, as libibverbs exports them: each
 * checks what the C API lets it check, then calls the Go side (vsh*, in
 * _cgo_export.h), which returns an errno. The struct verbs_context's ops
 * that verbs.h's inline functions call are here too; an op the simulator
 * does not have returns EOPNOTSUPP, as rdma-core's dummy ops do.
 */
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <endian.h>
#include <pthread.h>
#include <sys/eventfd.h>

#include "shim.h"
#include "_cgo_export.h"

/*
 * vsh_forked is set in a child after fork(): the Go runtime behind every
 * verb did not come along (only the forking thread did), so a verb there
 * stops the child with a message instead of hanging it.
 */
static volatile int vsh_forked;

static void vsh_child(void)
{
	vsh_forked = 1;
}

static void vsh_exit(void)
{
	if (!vsh_forked)
		vshTraceFlush();
}

__attribute__((constructor)) static void vsh_init(void)
{
	pthread_atfork(NULL, NULL, vsh_child);
	atexit(vsh_exit);
}

static uintptr_t vsh_checked(uintptr_t h, const char *verb)
{
	if (vsh_forked) {
		const char *pre = "";

		if (!strncmp(verb, "op_", 3)) {
			verb += 3; /* an op: ibv_poll_cq reaches op_poll_cq */
			pre = "ibv_";
		}
		fprintf(stderr, "libibverbs (vsh): %s%s in a child process after fork(): the simulator stays "
			"in the parent; call verbs only in the parent, or exec a new program in the child\n", pre, verb);
		abort();
	}
	return h;
}

#define H(type, p) vsh_checked(((struct type *)(p))->h, __func__)

static void *fail_ptr(int err)
{
	errno = err;
	return NULL;
}

static int fail_int(int err)
{
	if (!err)
		return 0;
	errno = err;
	return -1;
}

/* ret_errno returns err, with errno set to it too, as rdma-core's command path leaves it. */
static int ret_errno(int err)
{
	if (err)
		errno = err;
	return err;
}

/*
 * vsh_null stops the program where rdma-core would crash on a NULL
 * argument it dereferences, with a message naming the verb and the argument.
 */
void vsh_null(const char *verb, const char *arg, const char *fix)
{
	fprintf(stderr, "libibverbs (vsh): %s: %s is NULL; %s\n", verb, arg, fix);
	abort();
}

#define NEED(p, verb, fix)                       \
	do {                                     \
		if (!(p))                        \
			vsh_null(verb, #p, fix); \
	} while (0)

/* ---- devices ---- */

struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list = NULL;
	int n = 0, err;

	vsh_checked(0, __func__);
	err = vshDeviceList(&n, &list);

	if (num_devices)
		*num_devices = err ? 0 : n;
	if (err)
		return fail_ptr(err);
	return list;
}

void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
	return htobe64(vshDeviceGUID(H(vsh_device, device)));
}

int ibv_get_device_index(struct ibv_device *device)
{
	return (int)H(vsh_device, device) - 1;
}

/* ---- the dummy ops: what rdma-core's dummy_ops.c gives for an op a provider lacks ---- */

/* No memory windows here (rxe has them): said in the trace, as a learner may try them. */
static struct ibv_mw *dummy_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	return fail_ptr(vshRefuse((char *)"ibv_alloc_mw", (char *)"the simulator has no memory windows "
				  "(rxe has them; use an MR's rkey instead)", EOPNOTSUPP));
}

static int dummy_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	return vshRefuse((char *)"ibv_bind_mw", (char *)"the simulator has no memory windows", EOPNOTSUPP);
}

static int dummy_dealloc_mw(struct ibv_mw *mw)
{
	return EOPNOTSUPP;
}

static int dummy_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
			   struct ibv_sge *sg_list, uint32_t num_sges)
{
	return EOPNOTSUPP;
}

static struct ibv_mr *dummy_alloc_null_mr(struct ibv_pd *pd)
{
	return fail_ptr(EOPNOTSUPP);
}

static int dummy_read_counters(struct ibv_counters *counters, uint64_t *counters_value,
			       uint32_t ncounters, uint32_t flags)
{
	return EOPNOTSUPP;
}

static int dummy_attach_counters_point_flow(struct ibv_counters *counters,
					    struct ibv_counter_attach_attr *attr, struct ibv_flow *flow)
{
	return EOPNOTSUPP;
}

static struct ibv_counters *dummy_create_counters(struct ibv_context *context,
						  struct ibv_counters_init_attr *init_attr)
{
	return fail_ptr(EOPNOTSUPP);
}

static int dummy_destroy_counters(struct ibv_counters *counters)
{
	return EOPNOTSUPP;
}

static struct ibv_mr *dummy_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t dm_offset,
				      size_t length, unsigned int access)
{
	return fail_ptr(EOPNOTSUPP);
}

static struct ibv_dm *dummy_alloc_dm(struct ibv_context *context, struct ibv_alloc_dm_attr *attr)
{
	return fail_ptr(EOPNOTSUPP);
}

static int dummy_free_dm(struct ibv_dm *dm)
{
	return EOPNOTSUPP;
}

static int dummy_modify_flow_action_esp(struct ibv_flow_action *action,
					struct ibv_flow_action_esp_attr *attr)
{
	return EOPNOTSUPP;
}

static int dummy_destroy_flow_action(struct ibv_flow_action *action)
{
	return EOPNOTSUPP;
}

static struct ibv_flow_action *dummy_create_flow_action_esp(struct ibv_context *context,
							    struct ibv_flow_action_esp_attr *attr)
{
	return fail_ptr(EOPNOTSUPP);
}

static int dummy_modify_qp_rate_limit(struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *attr)
{
	return EOPNOTSUPP;
}

static struct ibv_pd *dummy_alloc_parent_domain(struct ibv_context *context,
						struct ibv_parent_domain_init_attr *attr)
{
	return fail_ptr(EOPNOTSUPP);
}

static int dummy_dealloc_td(struct ibv_td *td)
{
	return EOPNOTSUPP;
}

static struct ibv_td *dummy_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *init_attr)
{
	return fail_ptr(EOPNOTSUPP);
}

static int dummy_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr)
{
	return EOPNOTSUPP;
}

static int dummy_post_srq_ops(struct ibv_srq *srq, struct ibv_ops_wr *op, struct ibv_ops_wr **bad_op)
{
	return EOPNOTSUPP;
}

static int dummy_destroy_rwq_ind_table(struct ibv_rwq_ind_table *rwq_ind_table)
{
	return EOPNOTSUPP;
}

static struct ibv_rwq_ind_table *dummy_create_rwq_ind_table(struct ibv_context *context,
							    struct ibv_rwq_ind_table_init_attr *init_attr)
{
	return fail_ptr(EOPNOTSUPP);
}

static int dummy_destroy_wq(struct ibv_wq *wq)
{
	return EOPNOTSUPP;
}

static int dummy_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr)
{
	return EOPNOTSUPP;
}

static struct ibv_wq *dummy_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *wq_init_attr)
{
	return fail_ptr(EOPNOTSUPP);
}

static int dummy_query_rt_values(struct ibv_context *context, struct ibv_values_ex *values)
{
	return EOPNOTSUPP;
}

static struct ibv_cq_ex *dummy_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *init_attr)
{
	return fail_ptr(EOPNOTSUPP);
}

static int dummy_destroy_flow(struct ibv_flow *flow)
{
	return EOPNOTSUPP;
}

static struct ibv_flow *dummy_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *flow_attr)
{
	return fail_ptr(EOPNOTSUPP);
}

/* ---- the ops the simulator has ---- */

static int op_query_port(struct ibv_context *context, uint8_t port_num,
			 struct ibv_port_attr *port_attr, size_t port_attr_len)
{
	struct ibv_port_attr a;
	int err;

	NEED(port_attr, "ibv_query_port", "pass the address of a struct ibv_port_attr");
	memset(&a, 0, sizeof(a));
	err = vshQueryPort(H(vsh_context, (char *)context - offsetof(struct vsh_context, vctx.context)),
			   port_num, &a);
	if (err)
		return err;
	memcpy(port_attr, &a, port_attr_len < sizeof(a) ? port_attr_len : sizeof(a));
	return 0;
}

static int op_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
			      struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex a;
	int err;

	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(a.orig_attr))
		return EINVAL;
	memset(&a, 0, sizeof(a));
	err = ibv_query_device(context, &a.orig_attr);
	if (err)
		return err;
	a.phys_port_cnt_ex = a.orig_attr.phys_port_cnt;
	memcpy(attr, &a, attr_size < sizeof(a) ? attr_size : sizeof(a));
	return 0;
}

static int op_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
static int op_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
static int op_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
static int op_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
static int op_req_notify_cq(struct ibv_cq *cq, int solicited_only);
static struct ibv_qp *op_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr);
static struct ibv_srq *op_create_srq_ex(struct ibv_context *context, struct ibv_srq_init_attr_ex *attr);
static struct ibv_xrcd *op_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *attr);
static int op_close_xrcd(struct ibv_xrcd *xrcd);
static int op_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
static struct ibv_qp *op_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *attr);

/*
 * vsh_new_context allocates a context of device dev whose Go handle is h:
 * a struct verbs_context with every op set, async_fd the given eventfd.
 */
struct vsh_context *vsh_new_context(struct ibv_device *dev, uintptr_t h, int async_fd, int comp_vectors)
{
	struct vsh_context *c = calloc(1, sizeof(*c));
	struct verbs_context *v;
	struct ibv_context *ctx;

	if (!c)
		return NULL;
	c->h = h;
	v = &c->vctx;
	ctx = &v->context;
	ctx->device = dev;
	ctx->cmd_fd = -1;
	ctx->async_fd = async_fd;
	ctx->num_comp_vectors = comp_vectors;
	pthread_mutex_init(&ctx->mutex, NULL);
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;

	ctx->ops.alloc_mw = dummy_alloc_mw;
	ctx->ops.bind_mw = dummy_bind_mw;
	ctx->ops.dealloc_mw = dummy_dealloc_mw;
	ctx->ops.poll_cq = op_poll_cq;
	ctx->ops.req_notify_cq = op_req_notify_cq;
	ctx->ops.post_send = op_post_send;
	ctx->ops.post_recv = op_post_recv;
	ctx->ops.post_srq_recv = op_post_srq_recv;

	v->sz = sizeof(*v);
	v->query_port = op_query_port;
	v->advise_mr = dummy_advise_mr;
	v->alloc_null_mr = dummy_alloc_null_mr;
	v->read_counters = dummy_read_counters;
	v->attach_counters_point_flow = dummy_attach_counters_point_flow;
	v->create_counters = dummy_create_counters;
	v->destroy_counters = dummy_destroy_counters;
	v->reg_dm_mr = dummy_reg_dm_mr;
	v->alloc_dm = dummy_alloc_dm;
	v->free_dm = dummy_free_dm;
	v->modify_flow_action_esp = dummy_modify_flow_action_esp;
	v->destroy_flow_action = dummy_destroy_flow_action;
	v->create_flow_action_esp = dummy_create_flow_action_esp;
	v->modify_qp_rate_limit = dummy_modify_qp_rate_limit;
	v->alloc_parent_domain = dummy_alloc_parent_domain;
	v->dealloc_td = dummy_dealloc_td;
	v->alloc_td = dummy_alloc_td;
	v->modify_cq = dummy_modify_cq;
	v->post_srq_ops = dummy_post_srq_ops;
	v->destroy_rwq_ind_table = dummy_destroy_rwq_ind_table;
	v->create_rwq_ind_table = dummy_create_rwq_ind_table;
	v->destroy_wq = dummy_destroy_wq;
	v->modify_wq = dummy_modify_wq;
	v->create_wq = dummy_create_wq;
	v->query_rt_values = dummy_query_rt_values;
	v->create_cq_ex = dummy_create_cq_ex;
	v->query_device_ex = op_query_device_ex;
	v->ibv_destroy_flow = dummy_destroy_flow;
	v->ibv_create_flow = dummy_create_flow;
	v->open_qp = op_open_qp;
	v->create_qp_ex = op_create_qp_ex;
	v->get_srq_num = op_get_srq_num;
	v->create_srq_ex = op_create_srq_ex;
	v->open_xrcd = op_open_xrcd;
	v->close_xrcd = op_close_xrcd;
	return c;
}

#define CTX_H(ctx) H(vsh_context, (char *)(ctx) - offsetof(struct vsh_context, vctx.context))

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct ibv_context *ctx = NULL;
	int err = vshOpenDevice(device, H(vsh_device, device), &ctx);

	if (err)
		return fail_ptr(err);
	return ctx;
}

int ibv_close_device(struct ibv_context *context)
{
	return fail_int(vshCloseDevice(CTX_H(context)));
}

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr)
{
	NEED(device_attr, __func__, "pass the address of a struct ibv_device_attr");
	return ret_errno(vshQueryDevice(CTX_H(context), device_attr));
}

/* ibv_query_port is the symbol old binaries call; verbs.h's macro calls the op. */
#undef ibv_query_port
int ibv_query_port(struct ibv_context *context, uint8_t port_num, struct _compat_ibv_port_attr *port_attr)
{
	return op_query_port(context, port_num, (struct ibv_port_attr *)port_attr,
			     offsetof(struct ibv_port_attr, flags) + 1);
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
	NEED(gid, __func__, "pass the address of a union ibv_gid");
	return fail_int(vshQueryGID(CTX_H(context), port_num, index, gid, NULL));
}

/* The GID types as sysfs names them (rdma-core's driver.h, not installed). */
enum ibv_gid_type_sysfs {
	IBV_GID_TYPE_SYSFS_IB_ROCE_V1,
	IBV_GID_TYPE_SYSFS_ROCE_V2,
};

int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       enum ibv_gid_type_sysfs *type)
{
	union ibv_gid gid;
	uint32_t t = 0;
	int err = vshQueryGID(CTX_H(context), port_num, (int)index, &gid, &t);

	if (err)
		return fail_int(err);
	*type = t == IBV_GID_TYPE_ROCE_V2 ? IBV_GID_TYPE_SYSFS_ROCE_V2 : IBV_GID_TYPE_SYSFS_IB_ROCE_V1;
	return 0;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		      struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e;
	uint32_t t = 0;
	int err;

	if (flags)
		return EINVAL;
	if (entry_size < sizeof(e))
		return EINVAL;
	memset(&e, 0, sizeof(e));
	err = vshQueryGID(CTX_H(context), port_num, (int)gid_index, &e.gid, &t);
	if (err)
		return err;
	e.gid_index = gid_index;
	e.port_num = port_num;
	e.gid_type = t;
	memcpy(entry, &e, sizeof(e));
	return 0;
}

ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
			     size_t max_entries, uint32_t flags, size_t entry_size)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	size_t n = 0;
	int port, i;

	if (flags || entry_size < sizeof(struct ibv_gid_entry))
		return -EINVAL;
	if (ibv_query_device(context, &da))
		return -EIO;
	for (port = 1; port <= da.phys_port_cnt; port++) {
		if (op_query_port(context, port, &pa, sizeof(pa)))
			return -EIO;
		for (i = 0; i < pa.gid_tbl_len; i++) {
			struct ibv_gid_entry e;

			if (_ibv_query_gid_ex(context, port, i, &e, 0, sizeof(e)))
				continue; /* an empty slot */
			if (n == max_entries)
				return -EINVAL;
			memcpy((char *)entries + n * entry_size, &e, sizeof(e));
			n++;
		}
	}
	return n;
}

int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
	uint16_t p = 0;
	int err;

	NEED(pkey, __func__, "pass the address of a __be16");
	err = vshQueryPKey(CTX_H(context), port_num, index, &p);
	if (err)
		return fail_int(err);
	*pkey = htobe16(p);
	return 0;
}

int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	__be16 p;
	int i;

	for (i = 0; ibv_query_pkey(context, port_num, i, &p) == 0; i++)
		if (p == pkey)
			return i;
	return -1;
}

/* ---- protection domains and memory ---- */

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct ibv_pd *pd = NULL;
	int err = vshAllocPD(CTX_H(context), &pd);

	return err ? fail_ptr(err) : pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	return ret_errno(vshDeallocPD(H(vsh_pd, pd)));
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				unsigned int access)
{
	struct ibv_mr *mr = NULL;
	int err = vshRegMR(H(vsh_pd, pd), addr, length, iova, access, &mr);

	return err ? fail_ptr(err) : mr;
}

#undef ibv_reg_mr
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, access);
}

#undef ibv_reg_mr_iova
struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, access);
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	return ret_errno(vshDeregMR(H(vsh_mr, mr)));
}

/* ---- completion channels and CQs ---- */

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct ibv_comp_channel *ch = NULL;
	int err = vshCreateChannel(CTX_H(context), &ch);

	return err ? fail_ptr(err) : ch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	return ret_errno(vshDestroyChannel(H(vsh_channel, channel)));
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	struct ibv_cq *cq = NULL;
	int err = vshCreateCQ(CTX_H(context), cqe, cq_context, channel,
			      channel ? H(vsh_channel, channel) : 0, comp_vector, &cq);

	return err ? fail_ptr(err) : cq;
}

int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	return ret_errno(vshResizeCQ(H(vsh_cq, cq), cqe));
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	return ret_errno(vshDestroyCQ(H(vsh_cq, cq)));
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	uint64_t one;
	struct ibv_cq *got = NULL;
	int err;

	NEED(cq, __func__, "pass the address of a struct ibv_cq pointer");
	NEED(cq_context, __func__, "pass the address of a void pointer");
	err = vshChannelLive(H(vsh_channel, channel));
	if (err)
		return fail_int(err);
	if (read(channel->fd, &one, sizeof(one)) != sizeof(one))
		return -1;
	err = vshNextCQEvent(H(vsh_channel, channel), &got);
	if (err)
		return fail_int(err);
	*cq = got;
	*cq_context = got->cq_context;
	return 0;
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	vshAckCQEvents(H(vsh_cq, cq), nevents);
}

static int op_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	return vshPollCQ(H(vsh_cq, cq), num_entries, wc);
}

static int op_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return vshReqNotifyCQ(H(vsh_cq, cq), solicited_only);
}

/* ---- queue pairs ---- */

/* create_qp reads the handles of the objects attr names (here, so that a bad pointer faults in C). */
static int create_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr, struct ibv_qp **qp)
{
	uintptr_t pd = 0, xrcd = 0;

	if ((attr->comp_mask & IBV_QP_INIT_ATTR_PD) && attr->pd)
		pd = H(vsh_pd, attr->pd);
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) && attr->xrcd)
		xrcd = H(vsh_xrcd, attr->xrcd);
	return vshCreateQP(CTX_H(context), attr, attr->send_cq ? H(vsh_cq, attr->send_cq) : 0,
			   attr->recv_cq ? H(vsh_cq, attr->recv_cq) : 0, attr->srq ? H(vsh_srq, attr->srq) : 0,
			   pd, xrcd, qp);
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex;
	struct ibv_qp *qp = NULL;
	int err;

	if (!attr)
		return fail_ptr(vshRefuse((char *)__func__, (char *)"init_attr is NULL", EINVAL));
	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, attr, sizeof(*attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	err = create_qp(pd->context, &ex, &qp);
	if (err)
		return fail_ptr(err);
	attr->cap = ex.cap;
	return qp;
}

static struct ibv_qp *op_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp *qp = NULL;
	int err;

	if (!attr)
		return fail_ptr(vshRefuse((char *)"ibv_create_qp_ex", (char *)"qp_init_attr_ex is NULL", EINVAL));
	err = create_qp(context, attr, &qp);
	return err ? fail_ptr(err) : qp;
}

static struct ibv_qp *op_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *attr)
{
	struct ibv_qp *qp = NULL;
	int err;

	if (!attr)
		return fail_ptr(vshRefuse((char *)"ibv_open_qp", (char *)"attr is NULL", EINVAL));
	err = vshOpenQP(CTX_H(context), attr, attr->xrcd ? H(vsh_xrcd, attr->xrcd) : 0, &qp);
	return err ? fail_ptr(err) : qp;
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	int err;

	if (!attr)
		return ret_errno(vshRefuse((char *)__func__, (char *)"attr is NULL", EINVAL));
	err = vshModifyQP(H(vsh_qp, qp), attr, attr_mask);
	if (!err && (attr_mask & IBV_QP_STATE))
		qp->state = attr->qp_state;
	return ret_errno(err);
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init_attr)
{
	if (!attr || !init_attr)
		return ret_errno(vshRefuse((char *)__func__, (char *)"attr or init_attr is NULL", EINVAL));
	return ret_errno(vshQueryQP(H(vsh_qp, qp), attr, attr_mask, init_attr));
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	return ret_errno(vshDestroyQP(H(vsh_qp, qp)));
}

struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	/* No QP here is created with send_ops_flags: none has the ibv_wr_* API. */
	return NULL;
}

static void flatten_send(struct ibv_send_wr *wr, struct vsh_swr *f, int ud)
{
	memset(f, 0, sizeof(*f));
	f->wr_id = wr->wr_id;
	f->num_sge = wr->num_sge;
	f->opcode = wr->opcode;
	f->send_flags = wr->send_flags;
	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		f->imm = be32toh(wr->imm_data);
		break;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		f->imm = wr->invalidate_rkey;
		break;
	default:
		break;
	}
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		f->remote_addr = wr->wr.rdma.remote_addr;
		f->rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		f->remote_addr = wr->wr.atomic.remote_addr;
		f->rkey = wr->wr.atomic.rkey;
		f->compare_add = wr->wr.atomic.compare_add;
		f->swap = wr->wr.atomic.swap;
		break;
	default:
		break;
	}
	f->remote_srqn = wr->qp_type.xrc.remote_srqn;
	if (ud) {
		f->ah = wr->wr.ud.ah ? H(vsh_ah, wr->wr.ud.ah) : 0;
		f->remote_qpn = wr->wr.ud.remote_qpn;
		f->remote_qkey = wr->wr.ud.remote_qkey;
	}
}

static int sge_count_ok(int n)
{
	return n >= 0 && n <= VSH_MAX_SGE;
}

/*
 * A chunk of a work request list, copied: up to VSH_CHUNK requests, on
 * the stack when they are few.
 */
struct chunk {
	void *wrs;
	struct ibv_sge *sges;
	struct vsh_swr swr[32];
	struct vsh_rwr rwr[32];
	struct ibv_sge sge[64];
	int heap_wrs, heap_sges;
	char *inl;	/* inline data copied at post time, or NULL */
};

static int chunk_alloc(struct chunk *c, int n, size_t wr_size, int stack_wrs, void *stack, int nsge)
{
	c->inl = NULL;
	c->heap_wrs = n > stack_wrs;
	c->wrs = c->heap_wrs ? malloc((size_t)n * wr_size) : stack;
	c->heap_sges = nsge > 64;
	c->sges = c->heap_sges ? malloc((size_t)nsge * sizeof(struct ibv_sge)) : c->sge;
	return c->wrs && c->sges;
}

static void chunk_free(struct chunk *c)
{
	if (c->heap_wrs)
		free(c->wrs);
	if (c->heap_sges)
		free(c->sges);
	free(c->inl);
}

/*
 * VSH_INLINE_COPY bounds the inline data copied per request: more than
 * any queue's max_inline_data, which the simulator refuses before it reads.
 */
#define VSH_INLINE_COPY 65536

/*
 * copy_inline copies the inline requests' data now, as rdma-core's
 * providers memcpy it at post time (a bad address faults here, in C), and
 * points their SGEs at the copy.
 */
static int copy_inline(struct chunk *c, struct vsh_swr *f, int n)
{
	size_t total = 0, at = 0;
	int i, k;

	for (i = 0; i < n; i++) {
		size_t len = 0;

		if (!(f[i].send_flags & IBV_SEND_INLINE))
			continue;
		for (k = 0; k < f[i].num_sge; k++)
			len += c->sges[f[i].sge + k].length;
		if (len <= VSH_INLINE_COPY)
			total += len;
	}
	c->inl = NULL;
	if (!total)
		return 1;
	c->inl = malloc(total);
	if (!c->inl)
		return 0;
	for (i = 0; i < n; i++) {
		size_t len = 0;

		if (!(f[i].send_flags & IBV_SEND_INLINE))
			continue;
		for (k = 0; k < f[i].num_sge; k++)
			len += c->sges[f[i].sge + k].length;
		if (len > VSH_INLINE_COPY)
			continue;
		for (k = 0; k < f[i].num_sge; k++) {
			struct ibv_sge *g = &c->sges[f[i].sge + k];

			memcpy(c->inl + at, (void *)(uintptr_t)g->addr, g->length);
			g->addr = (uintptr_t)(c->inl + at);
			at += g->length;
		}
	}
	return 1;
}

static void *nth(void *wr, int n, size_t next_off)
{
	while (n-- > 0)
		wr = *(void **)((char *)wr + next_off);
	return wr;
}

/*
 * op_post_send is rxe_post_send's contract: EINVAL for a NULL bad_wr or
 * list, *bad_wr NULL on success, else the first request not posted (those
 * before it were).
 */
static int op_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	uintptr_t h = H(vsh_qp, qp);
	int ud = qp->qp_type == IBV_QPT_UD;
	int base = 0;

	if (!bad_wr)
		return vshRefuse((char *)"ibv_post_send", (char *)"bad_wr is NULL (rxe_post_send)", EINVAL);
	*bad_wr = NULL;
	if (!wr)
		return vshRefuse((char *)"ibv_post_send", (char *)"the work request list is NULL (rxe_post_send)", EINVAL);
	while (wr) {
		struct chunk c;
		struct ibv_send_wr *w;
		struct vsh_swr *f;
		int n = 0, nsge = 0, done = 0, bad = -1, err, i;

		for (w = wr; w && n < VSH_CHUNK && sge_count_ok(w->num_sge); w = w->next, n++)
			nsge += w->num_sge;
		if (w && n < VSH_CHUNK)
			bad = w->num_sge;
		if (!chunk_alloc(&c, n, sizeof(struct vsh_swr), 32, c.swr, nsge)) {
			chunk_free(&c);
			*bad_wr = wr;
			return ENOMEM;
		}
		f = c.wrs;
		nsge = 0;
		for (i = 0, w = wr; i < n; i++, w = w->next) {
			flatten_send(w, &f[i], ud);
			f[i].sge = nsge;
			if (w->num_sge)
				memcpy(&c.sges[nsge], w->sg_list, (size_t)w->num_sge * sizeof(struct ibv_sge));
			nsge += w->num_sge;
		}
		if (!copy_inline(&c, f, n)) {
			chunk_free(&c);
			*bad_wr = wr;
			return ENOMEM;
		}
		err = vshPostSend(h, f, n, c.sges, base, n < VSH_CHUNK && w ? 1 : 0, bad, &done);
		chunk_free(&c);
		if (err) {
			*bad_wr = nth(wr, done, offsetof(struct ibv_send_wr, next));
			return err;
		}
		base += n;
		wr = w;
	}
	return 0;
}

static int post_recv(uintptr_t h, int srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	const char *verb = srq ? "ibv_post_srq_recv" : "ibv_post_recv";
	int base = 0;

	if (!srq) {
		/* rxe_post_recv checks both; rxe_post_srq_recv neither. */
		if (!bad_wr)
			return vshRefuse((char *)verb, (char *)"bad_wr is NULL (rxe_post_recv)", EINVAL);
		*bad_wr = NULL;
		if (!wr)
			return vshRefuse((char *)verb, (char *)"the work request list is NULL (rxe_post_recv)", EINVAL);
	}
	while (wr) {
		struct chunk c;
		struct ibv_recv_wr *w;
		struct vsh_rwr *f;
		int n = 0, nsge = 0, done = 0, bad = -1, err, i;

		for (w = wr; w && n < VSH_CHUNK && sge_count_ok(w->num_sge); w = w->next, n++)
			nsge += w->num_sge;
		if (w && n < VSH_CHUNK)
			bad = w->num_sge;
		if (!chunk_alloc(&c, n, sizeof(struct vsh_rwr), 32, c.rwr, nsge)) {
			chunk_free(&c);
			NEED(bad_wr, verb, "the post failed and has nowhere to say which work request it refused: "
			     "pass the address of a pointer (struct ibv_recv_wr *bad_wr; ... &bad_wr)");
			*bad_wr = wr;
			return ENOMEM;
		}
		f = c.wrs;
		nsge = 0;
		for (i = 0, w = wr; i < n; i++, w = w->next) {
			f[i].wr_id = w->wr_id;
			f[i].sge = nsge;
			f[i].num_sge = w->num_sge;
			if (w->num_sge)
				memcpy(&c.sges[nsge], w->sg_list, (size_t)w->num_sge * sizeof(struct ibv_sge));
			nsge += w->num_sge;
		}
		err = vshPostRecv(h, srq, f, n, c.sges, base, n < VSH_CHUNK && w ? 1 : 0, bad, &done);
		chunk_free(&c);
		if (err) {
			NEED(bad_wr, verb, "the post failed and has nowhere to say which work request it refused: "
			     "pass the address of a pointer (struct ibv_recv_wr *bad_wr; ... &bad_wr)");
			*bad_wr = nth(wr, done, offsetof(struct ibv_recv_wr, next));
			return err;
		}
		base += n;
		wr = w;
	}
	return 0;
}

static int op_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	return post_recv(H(vsh_qp, qp), 0, wr, bad_wr);
}

static int op_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	return post_recv(H(vsh_srq, srq), 1, wr, bad_wr);
}

int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	NEED(gid, __func__, "pass the address of the group's union ibv_gid");
	return vshMcast(H(vsh_qp, qp), (union ibv_gid *)gid, lid, 1);
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	NEED(gid, __func__, "pass the address of the group's union ibv_gid");
	return vshMcast(H(vsh_qp, qp), (union ibv_gid *)gid, lid, 0);
}

/* ---- shared receive queues and XRC ---- */

static int create_srq(struct ibv_context *context, struct ibv_srq_init_attr_ex *attr, struct ibv_srq **srq)
{
	uintptr_t pd = 0, xrcd = 0, cq = 0;

	if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) && attr->pd)
		pd = H(vsh_pd, attr->pd);
	if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) && attr->xrcd)
		xrcd = H(vsh_xrcd, attr->xrcd);
	if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) && attr->cq)
		cq = H(vsh_cq, attr->cq);
	return vshCreateSRQ(CTX_H(context), attr, pd, xrcd, cq, srq);
}

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ex;
	struct ibv_srq *srq = NULL;
	int err;

	if (!attr)
		return fail_ptr(vshRefuse((char *)__func__, (char *)"srq_init_attr is NULL", EINVAL));
	memset(&ex, 0, sizeof(ex));
	ex.srq_context = attr->srq_context;
	ex.attr = attr->attr;
	ex.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
	ex.srq_type = IBV_SRQT_BASIC;
	ex.pd = pd;
	err = create_srq(pd->context, &ex, &srq);
	if (err)
		return fail_ptr(err);
	attr->attr = ex.attr;
	return srq;
}

static struct ibv_srq *op_create_srq_ex(struct ibv_context *context, struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq *srq = NULL;
	int err;

	if (!attr)
		return fail_ptr(vshRefuse((char *)"ibv_create_srq_ex", (char *)"srq_init_attr_ex is NULL", EINVAL));
	err = create_srq(context, attr, &srq);
	return err ? fail_ptr(err) : srq;
}

int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int attr_mask)
{
	if (!attr)
		return ret_errno(vshRefuse((char *)__func__, (char *)"attr is NULL", EINVAL));
	return ret_errno(vshModifySRQ(H(vsh_srq, srq), attr, attr_mask));
}

int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	if (!attr)
		return ret_errno(vshRefuse((char *)__func__, (char *)"attr is NULL", EINVAL));
	return ret_errno(vshQuerySRQ(H(vsh_srq, srq), attr));
}

int ibv_destroy_srq(struct ibv_srq *srq)
{
	return ret_errno(vshDestroySRQ(H(vsh_srq, srq)));
}

static int op_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num)
{
	NEED(srq_num, "ibv_get_srq_num", "pass the address of a uint32_t");
	return vshSRQNum(H(vsh_srq, srq), srq_num);
}

static struct ibv_xrcd *op_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *attr)
{
	struct ibv_xrcd *x = NULL;
	int err;

	if (!attr)
		return fail_ptr(vshRefuse((char *)"ibv_open_xrcd", (char *)"xrcd_init_attr is NULL", EINVAL));
	err = vshOpenXRCD(CTX_H(context), attr, &x);
	return err ? fail_ptr(err) : x;
}

static int op_close_xrcd(struct ibv_xrcd *xrcd)
{
	return vshCloseXRCD(H(vsh_xrcd, xrcd));
}

/* ---- address handles ---- */

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct ibv_ah *ah = NULL;
	int err;

	if (!attr)
		return fail_ptr(vshRefuse((char *)__func__, (char *)"attr is NULL", EINVAL));
	err = vshCreateAH(H(vsh_pd, pd), attr, &ah);
	return err ? fail_ptr(err) : ah;
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	return ret_errno(vshDestroyAH(H(vsh_ah, ah)));
}

/*
 * ibv_init_ah_from_wc builds the address vector back to a UD sender from
 * its completion and the 40 bytes before the message: a GRH, or for RoCEv2
 * over IPv4 an IPv4 header in the last 20 of them.
 */
int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
			struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	union ibv_gid dgid, sgid;
	int i;

	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	if (!grh)
		return fail_int(EINVAL);
	memset(&dgid, 0, sizeof(dgid));
	memset(&sgid, 0, sizeof(sgid));
	if ((((uint8_t *)grh)[20] >> 4) == 4) {
		const uint8_t *ip = (const uint8_t *)grh + 20;

		dgid.raw[10] = sgid.raw[10] = 0xff;
		dgid.raw[11] = sgid.raw[11] = 0xff;
		memcpy(&dgid.raw[12], ip + 12, 4); /* their source is our destination */
		memcpy(&sgid.raw[12], ip + 16, 4);
		ah_attr->grh.hop_limit = 0xff;
		ah_attr->grh.traffic_class = ip[1];
	} else {
		uint32_t vtf = be32toh(grh->version_tclass_flow);

		dgid = grh->sgid;
		sgid = grh->dgid;
		ah_attr->grh.flow_label = vtf & 0xfffff;
		ah_attr->grh.traffic_class = (vtf >> 20) & 0xff;
		ah_attr->grh.hop_limit = 0xff;
	}
	ah_attr->is_global = 1;
	ah_attr->grh.dgid = dgid;
	for (i = 0;; i++) {
		union ibv_gid g;

		if (ibv_query_gid(context, port_num, i, &g))
			return fail_int(ENOENT); /* no GID of ours was the destination */
		if (!memcmp(&g, &sgid, sizeof(g)))
			break;
	}
	ah_attr->grh.sgid_index = i;
	return 0;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
				     uint8_t port_num)
{
	struct ibv_ah_attr a;

	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &a))
		return NULL;
	return ibv_create_ah(pd, &a);
}

/* ---- async events and fork ---- */

int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	uint64_t one;
	int err;

	NEED(event, __func__, "pass the address of a struct ibv_async_event");
	err = vshContextLive(CTX_H(context));
	if (err)
		return fail_int(err);
	if (read(context->async_fd, &one, sizeof(one)) != sizeof(one))
		return -1;
	return fail_int(vshNextAsyncEvent(CTX_H(context), event));
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	NEED(event, __func__, "pass the event ibv_get_async_event filled");
	vshAckAsyncEvent(event);
}

int ibv_fork_init(void)
{
	/*
	 * The simulator pins no pages, so the parent's memory is safe across
	 * fork() (ibv_is_fork_initialized says IBV_FORK_UNNEEDED); a child
	 * cannot use verbs (vsh_checked).
	 */
	return 0;
}
