//go:build linux && cgo && ibverbs

/*
 * Every symbol of Debian 12's libibverbs.so.1 (rdma-core 44) that shim.c
 * does not define, with rdma-core's behaviour where that needs no kernel
 * and no provider: the string and rate conversions, the kernel-struct
 * copies, sysfs reads. The rest fails as rdma-core does for a device whose
 * provider lacks the op, or, for the private provider interface, as a
 * kernel command would: no provider ever gets a context of this library.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <infiniband/verbs.h>
#include <infiniband/sa.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

/*
 * Types of rdma-core's private headers (driver.h, kern-abi.h, cmd_ioctl.h),
 * which Debian does not install: only pointers to them cross this file.
 */
struct ibv_command_buffer;
struct verbs_context_ops;
struct verbs_counters;
struct verbs_cq;
struct verbs_device_ops;
struct verbs_dm;
struct verbs_flow_action;
struct verbs_mr;
struct verbs_qp;
struct verbs_srq;
struct verbs_sysfs_dev;
struct verbs_xrcd;
struct ibv_alloc_mw;
struct ibv_alloc_pd;
struct ibv_create_cq;
struct ibv_create_cq_ex;
struct ibv_create_qp;
struct ibv_create_qp_ex;
struct ibv_create_wq;
struct ibv_create_xsrq;
struct ibv_create_srq;
struct ibv_get_context;
struct ibv_modify_cq;
struct ibv_modify_qp;
struct ibv_modify_qp_ex;
struct ibv_modify_srq;
struct ibv_modify_wq;
struct ibv_open_qp;
struct ibv_open_xrcd;
struct ibv_query_port;
struct ibv_query_qp;
struct ibv_query_srq;
struct ibv_reg_mr;
struct ibv_rereg_mr;
struct ibv_resize_cq;

/* Enum strings: the text rdma-core's give, "unknown" out of range. */

const char *ibv_node_type_str(enum ibv_node_type node_type)
{
	switch (node_type) {
	case IBV_NODE_CA:		return "InfiniBand channel adapter";
	case IBV_NODE_SWITCH:		return "InfiniBand switch";
	case IBV_NODE_ROUTER:		return "InfiniBand router";
	case IBV_NODE_RNIC:		return "iWARP NIC";
	case IBV_NODE_USNIC:		return "usNIC";
	case IBV_NODE_USNIC_UDP:	return "usNIC UDP";
	case IBV_NODE_UNSPECIFIED:	return "unspecified";
	default:			return "unknown";
	}
}

const char *ibv_port_state_str(enum ibv_port_state port_state)
{
	switch (port_state) {
	case IBV_PORT_NOP:		return "no state change (NOP)";
	case IBV_PORT_DOWN:		return "down";
	case IBV_PORT_INIT:		return "init";
	case IBV_PORT_ARMED:		return "armed";
	case IBV_PORT_ACTIVE:		return "active";
	case IBV_PORT_ACTIVE_DEFER:	return "active defer";
	default:			return "unknown";
	}
}

const char *ibv_event_type_str(enum ibv_event_type event)
{
	switch (event) {
	case IBV_EVENT_CQ_ERR:		return "CQ error";
	case IBV_EVENT_QP_FATAL:	return "local work queue catastrophic error";
	case IBV_EVENT_QP_REQ_ERR:	return "invalid request local work queue error";
	case IBV_EVENT_QP_ACCESS_ERR:	return "local access violation work queue error";
	case IBV_EVENT_COMM_EST:	return "communication established";
	case IBV_EVENT_SQ_DRAINED:	return "send queue drained";
	case IBV_EVENT_PATH_MIG:	return "path migrated";
	case IBV_EVENT_PATH_MIG_ERR:	return "path migration request error";
	case IBV_EVENT_DEVICE_FATAL:	return "local catastrophic error";
	case IBV_EVENT_PORT_ACTIVE:	return "port active";
	case IBV_EVENT_PORT_ERR:	return "port error";
	case IBV_EVENT_LID_CHANGE:	return "LID change";
	case IBV_EVENT_PKEY_CHANGE:	return "P_Key change";
	case IBV_EVENT_SM_CHANGE:	return "SM change";
	case IBV_EVENT_SRQ_ERR:		return "SRQ catastrophic error";
	case IBV_EVENT_SRQ_LIMIT_REACHED: return "SRQ limit reached";
	case IBV_EVENT_QP_LAST_WQE_REACHED: return "last WQE reached";
	case IBV_EVENT_CLIENT_REREGISTER: return "client reregistration";
	case IBV_EVENT_GID_CHANGE:	return "GID table change";
	case IBV_EVENT_WQ_FATAL:	return "WQ fatal";
	default:			return "unknown";
	}
}

const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	switch (status) {
	case IBV_WC_SUCCESS:		return "success";
	case IBV_WC_LOC_LEN_ERR:	return "local length error";
	case IBV_WC_LOC_QP_OP_ERR:	return "local QP operation error";
	case IBV_WC_LOC_EEC_OP_ERR:	return "local EE context operation error";
	case IBV_WC_LOC_PROT_ERR:	return "local protection error";
	case IBV_WC_WR_FLUSH_ERR:	return "Work Request Flushed Error";
	case IBV_WC_MW_BIND_ERR:	return "memory management operation error";
	case IBV_WC_BAD_RESP_ERR:	return "bad response error";
	case IBV_WC_LOC_ACCESS_ERR:	return "local access error";
	case IBV_WC_REM_INV_REQ_ERR:	return "remote invalid request error";
	case IBV_WC_REM_ACCESS_ERR:	return "remote access error";
	case IBV_WC_REM_OP_ERR:		return "remote operation error";
	case IBV_WC_RETRY_EXC_ERR:	return "transport retry counter exceeded";
	case IBV_WC_RNR_RETRY_EXC_ERR:	return "RNR retry counter exceeded";
	case IBV_WC_LOC_RDD_VIOL_ERR:	return "local RDD violation error";
	case IBV_WC_REM_INV_RD_REQ_ERR:	return "remote invalid RD request";
	case IBV_WC_REM_ABORT_ERR:	return "aborted error";
	case IBV_WC_INV_EECN_ERR:	return "invalid EE context number";
	case IBV_WC_INV_EEC_STATE_ERR:	return "invalid EE context state";
	case IBV_WC_FATAL_ERR:		return "fatal error";
	case IBV_WC_RESP_TIMEOUT_ERR:	return "response timeout error";
	case IBV_WC_GENERAL_ERR:	return "general error";
	case IBV_WC_TM_ERR:		return "TM error";
	case IBV_WC_TM_RNDV_INCOMPLETE:	return "TM software rendezvous";
	default:			return "unknown";
	}
}

/*
 * Each rate's multiple of 2.5 Gb/s (0: rdma-core's ibv_rate_to_mult knows
 * none) and its Mb/s as rdma-core gives them. Unknown values give -1, or
 * IBV_RATE_MAX the other way.
 */
static const struct {
	enum ibv_rate rate;
	int mult;
	int mbps;
} rates[] = {
	{ IBV_RATE_2_5_GBPS,	1,	2500 },
	{ IBV_RATE_5_GBPS,	2,	5000 },
	{ IBV_RATE_10_GBPS,	4,	10000 },
	{ IBV_RATE_20_GBPS,	8,	20000 },
	{ IBV_RATE_30_GBPS,	12,	30000 },
	{ IBV_RATE_40_GBPS,	16,	40000 },
	{ IBV_RATE_60_GBPS,	24,	60000 },
	{ IBV_RATE_80_GBPS,	32,	80000 },
	{ IBV_RATE_120_GBPS,	48,	120000 },
	{ IBV_RATE_14_GBPS,	0,	14062 },
	{ IBV_RATE_56_GBPS,	0,	56250 },
	{ IBV_RATE_112_GBPS,	0,	112500 },
	{ IBV_RATE_168_GBPS,	0,	168750 },
	{ IBV_RATE_25_GBPS,	0,	25781 },
	{ IBV_RATE_100_GBPS,	0,	103125 },
	{ IBV_RATE_200_GBPS,	0,	206250 },
	{ IBV_RATE_300_GBPS,	0,	309375 },
	{ IBV_RATE_28_GBPS,	11,	28125 },
	{ IBV_RATE_50_GBPS,	20,	53125 },
	{ IBV_RATE_400_GBPS,	160,	425000 },
	{ IBV_RATE_600_GBPS,	240,	637500 },
	{ IBV_RATE_800_GBPS,	320,	850000 },
	{ IBV_RATE_1200_GBPS,	480,	1275000 },
};

#define NRATES (sizeof(rates) / sizeof(rates[0]))

int ibv_rate_to_mult(enum ibv_rate rate)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].rate == rate && rates[i].mult)
			return rates[i].mult;
	return -1;
}

enum ibv_rate mult_to_ibv_rate(int mult)
{
	for (size_t i = 0; i < NRATES; i++)
		if (mult && rates[i].mult == mult)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

int ibv_rate_to_mbps(enum ibv_rate rate)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].rate == rate)
			return rates[i].mbps;
	return -1;
}

enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].mbps == mbps)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

/*
 * Kernel ABI structs to verbs structs and back, field by field, with the
 * fields rdma-core copies (not qp_state nor the attribute mask).
 */

void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst,
				struct ib_uverbs_ah_attr *src)
{
	memcpy(dst->grh.dgid.raw, src->grh.dgid, sizeof(dst->grh.dgid.raw));
	dst->grh.flow_label = src->grh.flow_label;
	dst->grh.sgid_index = src->grh.sgid_index;
	dst->grh.hop_limit = src->grh.hop_limit;
	dst->grh.traffic_class = src->grh.traffic_class;
	dst->dlid = src->dlid;
	dst->sl = src->sl;
	dst->src_path_bits = src->src_path_bits;
	dst->static_rate = src->static_rate;
	dst->is_global = src->is_global;
	dst->port_num = src->port_num;
}

void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst,
				struct ib_uverbs_qp_attr *src)
{
	dst->cur_qp_state = src->cur_qp_state;
	dst->path_mtu = src->path_mtu;
	dst->path_mig_state = src->path_mig_state;
	dst->qkey = src->qkey;
	dst->rq_psn = src->rq_psn;
	dst->sq_psn = src->sq_psn;
	dst->dest_qp_num = src->dest_qp_num;
	dst->qp_access_flags = src->qp_access_flags;
	dst->cap = (struct ibv_qp_cap){
		.max_send_wr = src->max_send_wr,
		.max_recv_wr = src->max_recv_wr,
		.max_send_sge = src->max_send_sge,
		.max_recv_sge = src->max_recv_sge,
		.max_inline_data = src->max_inline_data,
	};
	ibv_copy_ah_attr_from_kern(&dst->ah_attr, &src->ah_attr);
	ibv_copy_ah_attr_from_kern(&dst->alt_ah_attr, &src->alt_ah_attr);
	dst->pkey_index = src->pkey_index;
	dst->alt_pkey_index = src->alt_pkey_index;
	dst->en_sqd_async_notify = src->en_sqd_async_notify;
	dst->sq_draining = src->sq_draining;
	dst->max_rd_atomic = src->max_rd_atomic;
	dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
	dst->min_rnr_timer = src->min_rnr_timer;
	dst->port_num = src->port_num;
	dst->timeout = src->timeout;
	dst->retry_cnt = src->retry_cnt;
	dst->rnr_retry = src->rnr_retry;
	dst->alt_port_num = src->alt_port_num;
	dst->alt_timeout = src->alt_timeout;
}

/* The path record's fields in common, both ways. */
#define COPY_PATH_REC(dst, src)						\
	do {								\
		(dst)->dlid = (src)->dlid;				\
		(dst)->slid = (src)->slid;				\
		(dst)->raw_traffic = (src)->raw_traffic;		\
		(dst)->flow_label = (src)->flow_label;			\
		(dst)->hop_limit = (src)->hop_limit;			\
		(dst)->traffic_class = (src)->traffic_class;		\
		(dst)->reversible = (src)->reversible;			\
		(dst)->numb_path = (src)->numb_path;			\
		(dst)->pkey = (src)->pkey;				\
		(dst)->sl = (src)->sl;					\
		(dst)->mtu_selector = (src)->mtu_selector;		\
		(dst)->mtu = (src)->mtu;				\
		(dst)->rate_selector = (src)->rate_selector;		\
		(dst)->rate = (src)->rate;				\
		(dst)->packet_life_time_selector =			\
			(src)->packet_life_time_selector;		\
		(dst)->packet_life_time = (src)->packet_life_time;	\
		(dst)->preference = (src)->preference;			\
	} while (0)

void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst,
				 struct ib_user_path_rec *src)
{
	memcpy(dst->dgid.raw, src->dgid, sizeof(src->dgid));
	memcpy(dst->sgid.raw, src->sgid, sizeof(src->sgid));
	COPY_PATH_REC(dst, src);
}

void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst,
			       struct ibv_sa_path_rec *src)
{
	memcpy(dst->dgid, src->dgid.raw, sizeof(dst->dgid));
	memcpy(dst->sgid, src->sgid.raw, sizeof(dst->sgid));
	COPY_PATH_REC(dst, src);
}

/*
 * Fork: the simulator pins no memory, so the ranges need no madvise and
 * fork is safe whatever ibv_fork_init did: what rdma-core reports on a
 * kernel with copy-on-fork.
 */

int ibv_dontfork_range(void *base, size_t size)
{
	return 0;
}

int ibv_dofork_range(void *base, size_t size)
{
	return 0;
}

enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

/*
 * sysfs: the path and a file read as rdma-core does them. The simulated
 * devices have no sysfs entry, so reads under their ibdev_path fail.
 */

static char sysfs_path[257];
static pthread_once_t sysfs_once = PTHREAD_ONCE_INIT;

/* $SYSFS_PATH without trailing slashes (ignored when set-id), else /sys. */
static void sysfs_path_init(void)
{
	const char *env = getuid() == geteuid() ? getenv("SYSFS_PATH") : NULL;
	size_t n;

	snprintf(sysfs_path, sizeof(sysfs_path), "%s", env ? env : "/sys");
	for (n = strlen(sysfs_path); n > 0 && sysfs_path[n - 1] == '/'; n--)
		sysfs_path[n - 1] = '\0';
}

const char *ibv_get_sysfs_path(void)
{
	pthread_once(&sysfs_once, sysfs_path_init);
	return sysfs_path;
}

/*
 * dir/file into buf without its trailing newline, NUL-terminated: the
 * length, -1 (errno set) where it cannot be read, -1 where it does not fit.
 */
int ibv_read_sysfs_file(const char *dir, const char *file,
			char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t len;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);
	if (len <= 0)
		return len;
	if (buf[len - 1] == '\n')
		buf[--len] = '\0';
	else if ((size_t)len < size)
		buf[len] = '\0';
	else
		return -1;
	return len;
}

/* No device of this library has a verbs_sysfs_dev: rdma-core's EINVAL. */
int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
			      struct verbs_sysfs_dev *sysfs_dev,
			      const char *fnfmt, ...)
{
	errno = EINVAL;
	return -1;
}

/*
 * No host interface owns a simulated GID, so rdma-core's neighbour lookup
 * stops at the source address: -EINVAL, after the GID query's own error.
 */
int ibv_resolve_eth_l2_from_gid(struct ibv_context *context,
				struct ibv_ah_attr *attr,
				uint8_t eth_mac[ETHERNET_LL_SIZE],
				uint16_t *vid)
{
	union ibv_gid sgid;

	if (ibv_query_gid(context, attr->port_num, attr->grh.sgid_index, &sgid))
		return -1;
	return -EINVAL;
}

/* Verbs the simulator lacks: what rdma-core's wrapper and dummy op give. */

/* Input errors as rdma-core finds them; else the command fails. */
int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
		 size_t length, int access)
{
	if ((flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) ||
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (!length || !addr)) ||
	    (access && !(flags & IBV_REREG_MR_CHANGE_ACCESS))) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	errno = EOPNOTSUPP;
	return IBV_REREG_MR_ERR_CMD;
}

struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
				 size_t length, uint64_t iova, int fd,
				 int access)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* Not a character device: EINVAL; else none of ours: ENODEV. */
struct ibv_context *ibv_import_device(int cmd_fd)
{
	struct stat st;

	errno = fstat(cmd_fd, &st) || !S_ISCHR(st.st_mode) ? EINVAL : ENODEV;
	return NULL;
}

struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	errno = EOPNOTSUPP;
	return NULL;
}

void ibv_unimport_pd(struct ibv_pd *pd)
{
}

void ibv_unimport_mr(struct ibv_mr *mr)
{
}

void ibv_unimport_dm(struct ibv_dm *dm)
{
}

/* The return value only: rdma-core sets errno only for vendor_id 0. */
int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	return EOPNOTSUPP;
}

int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	if (!ece->vendor_id)
		errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* 0: no guarantee that data lands in order. */
int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op,
			       uint32_t flags)
{
	return 0;
}

/*
 * The provider interface (IBVERBS_PRIVATE_34). Providers linked into a
 * program (libmlx5, libefa) register from their constructors; none is ever
 * asked for a context, so the calls that would follow fail or do nothing.
 */

bool verbs_allow_disassociate_destroy;

void verbs_register_driver_34(const struct verbs_device_ops *ops)
{
}

void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops)
{
}

/* rdma-core's: the CQ's common fields, and one more user of the channel. */
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context)
{
	cq->context = context;
	cq->channel = channel;
	if (channel) {
		pthread_mutex_lock(&context->mutex);
		channel->refcnt++;
		pthread_mutex_unlock(&context->mutex);
	}
	cq->cq_context = cq_context;
	cq->comp_events_completed = 0;
	cq->async_events_completed = 0;
	pthread_mutex_init(&cq->mutex, NULL);
	pthread_cond_init(&cq->cond, NULL);
}

/* Takes cmd_fd as rdma-core's does, closing it on failure. */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id)
{
	if (cmd_fd >= 0)
		close(cmd_fd);
	errno = EOPNOTSUPP;
	return NULL;
}

/* Only a context from _verbs_init_and_alloc_context, so never one. */
void verbs_uninit_context(struct verbs_context *context)
{
}

/* ibv_open_device is this with no provider data; with some: EOPNOTSUPP. */
struct ibv_context *verbs_open_device(struct ibv_device *device,
				      void *private_data)
{
	if (private_data) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return ibv_open_device(device);
}

/* As rdma-core's without VERBS_LOG_LEVEL: nothing. */
void __verbs_log(struct verbs_context *ctx, uint32_t level,
		 const char *fmt, ...)
{
}

/* rdma-core's struct ibv_command_buffer (cmd_ioctl.h), for its layout. */
struct cmd_buffer {
	struct cmd_buffer *next;
	struct ib_uverbs_attr *next_attr;
	struct ib_uverbs_attr *last_attr;
	uint8_t uhw_in_idx;
	uint8_t uhw_out_idx;
	uint8_t uhw_in_headroom_dwords;
	uint8_t uhw_out_headroom_dwords;
	uint8_t buffer_error:1;
	uint8_t fallback_require_ex:1;
	uint8_t fallback_ioctl_only:1;
	struct ib_uverbs_ioctl_hdr hdr;
};

/* num_attrs plus the attributes filled in each linked buffer. */
unsigned int __ioctl_final_num_attrs(unsigned int num_attrs,
				     struct ibv_command_buffer *link)
{
	for (struct cmd_buffer *b = (struct cmd_buffer *)link; b; b = b->next)
		num_attrs += b->next_attr - b->hdr.attrs;
	return num_attrs;
}

/*
 * The kernel's commands: there is no uverbs device behind a context, so
 * each fails, returning the errno value (and setting errno) as rdma-core's
 * do when the kernel refuses.
 */
static int no_kernel(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

int execute_ioctl(struct ibv_context *context, struct ibv_command_buffer *cmd)
{
	return no_kernel();
}

int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size)
{
	return no_kernel();
}

int ibv_cmd_query_context(struct ibv_context *ctx,
			  struct ibv_command_buffer *driver)
{
	return no_kernel();
}

int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size)
{
	return no_kernel();
}

int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size)
{
	return no_kernel();
}

int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size)
{
	return no_kernel();
}

int ibv_cmd_dealloc_pd(struct ibv_pd *pd)
{
	return no_kernel();
}

int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd,
		      int vxrcd_size, struct ibv_xrcd_init_attr *attr,
		      struct ibv_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size)
{
	return no_kernel();
}

int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd)
{
	return no_kernel();
}

int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size)
{
	return no_kernel();
}

int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz)
{
	return no_kernel();
}

int ibv_cmd_dereg_mr(struct verbs_mr *vmr)
{
	return no_kernel();
}

int ibv_cmd_query_mr(struct ibv_pd *pd, struct verbs_mr *vmr,
		     uint32_t mr_handle)
{
	return no_kernel();
}

int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		      uint32_t flags, struct ibv_sge *sg_list,
		      uint32_t num_sge)
{
	return no_kernel();
}

int ibv_cmd_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
			  uint64_t iova, int fd, int access,
			  struct verbs_mr *vmr)
{
	return no_kernel();
}

int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size)
{
	return no_kernel();
}

int ibv_cmd_dealloc_mw(struct ibv_mw *mw)
{
	return no_kernel();
}

int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size)
{
	return no_kernel();
}

int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags)
{
	return no_kernel();
}

/* rdma-core's poll returns -1 on failure, not an errno value. */
int ibv_cmd_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc)
{
	no_kernel();
	return -1;
}

int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return no_kernel();
}

int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
		      size_t resp_size)
{
	return no_kernel();
}

int ibv_cmd_destroy_cq(struct ibv_cq *cq)
{
	return no_kernel();
}

int ibv_cmd_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr,
		      struct ibv_modify_cq *cmd, size_t cmd_size)
{
	return no_kernel();
}

int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size)
{
	return no_kernel();
}

int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex,
			  struct ibv_create_xsrq *cmd, size_t cmd_size,
			  struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size)
{
	return no_kernel();
}

int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size)
{
	return no_kernel();
}

int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size)
{
	return no_kernel();
}

int ibv_cmd_destroy_srq(struct ibv_srq *srq)
{
	return no_kernel();
}

int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr, struct ibv_create_qp *cmd,
		      size_t cmd_size, struct ib_uverbs_create_qp_resp *resp,
		      size_t resp_size)
{
	return no_kernel();
}

int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct ibv_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size)
{
	return no_kernel();
}

int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *qp_attr,
			  struct ibv_create_qp_ex *cmd, size_t cmd_size,
			  struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size)
{
	return no_kernel();
}

int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp,
		    int vqp_sz, struct ibv_qp_open_attr *attr,
		    struct ibv_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size)
{
	return no_kernel();
}

int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size)
{
	return no_kernel();
}

int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size)
{
	return no_kernel();
}

int ibv_cmd_modify_qp_ex(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask, struct ibv_modify_qp_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_modify_qp_resp *resp,
			 size_t resp_size)
{
	return no_kernel();
}

int ibv_cmd_destroy_qp(struct ibv_qp *qp)
{
	return no_kernel();
}

/* The posts also name the first work request as the bad one. */
int ibv_cmd_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr)
{
	*bad_wr = wr;
	return no_kernel();
}

int ibv_cmd_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	*bad_wr = wr;
	return no_kernel();
}

int ibv_cmd_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad_wr)
{
	*bad_wr = wr;
	return no_kernel();
}

int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size)
{
	return no_kernel();
}

int ibv_cmd_destroy_ah(struct ibv_ah *ah)
{
	return no_kernel();
}

int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid)
{
	return no_kernel();
}

int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid)
{
	return no_kernel();
}

int ibv_cmd_create_flow(struct ibv_qp *qp, struct ibv_flow *flow_id,
			struct ibv_flow_attr *flow_attr, void *ucmd,
			size_t ucmd_size)
{
	return no_kernel();
}

int ibv_cmd_destroy_flow(struct ibv_flow *flow_id)
{
	return no_kernel();
}

int ibv_cmd_create_flow_action_esp(struct ibv_context *ctx,
				   struct ibv_flow_action_esp_attr *attr,
				   struct verbs_flow_action *flow_action,
				   struct ibv_command_buffer *driver)
{
	return no_kernel();
}

int ibv_cmd_modify_flow_action_esp(struct verbs_flow_action *flow_action,
				   struct ibv_flow_action_esp_attr *attr,
				   struct ibv_command_buffer *driver)
{
	return no_kernel();
}

int ibv_cmd_destroy_flow_action(struct verbs_flow_action *action)
{
	return no_kernel();
}

int ibv_cmd_create_wq(struct ibv_context *context,
		      struct ibv_wq_init_attr *wq_init_attr, struct ibv_wq *wq,
		      struct ibv_create_wq *cmd, size_t cmd_size,
		      struct ib_uverbs_ex_create_wq_resp *resp,
		      size_t resp_size)
{
	return no_kernel();
}

int ibv_cmd_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr,
		      struct ibv_modify_wq *cmd, size_t cmd_size)
{
	return no_kernel();
}

int ibv_cmd_destroy_wq(struct ibv_wq *wq)
{
	return no_kernel();
}

int ibv_cmd_create_rwq_ind_table(struct ibv_context *context,
				 struct ibv_rwq_ind_table_init_attr *init_attr,
				 struct ibv_rwq_ind_table *rwq_ind_table,
				 struct ib_uverbs_ex_create_rwq_ind_table_resp *resp,
				 size_t resp_size)
{
	return no_kernel();
}

int ibv_cmd_destroy_rwq_ind_table(struct ibv_rwq_ind_table *rwq_ind_table)
{
	return no_kernel();
}

int ibv_cmd_create_counters(struct ibv_context *context,
			    struct ibv_counters_init_attr *init_attr,
			    struct verbs_counters *vcounters,
			    struct ibv_command_buffer *link)
{
	return no_kernel();
}

int ibv_cmd_destroy_counters(struct verbs_counters *vcounters)
{
	return no_kernel();
}

int ibv_cmd_read_counters(struct verbs_counters *vcounters,
			  uint64_t *counters_value, uint32_t ncounters,
			  uint32_t flags, struct ibv_command_buffer *link)
{
	return no_kernel();
}

int ibv_cmd_alloc_dm(struct ibv_context *ctx,
		     const struct ibv_alloc_dm_attr *dm_attr,
		     struct verbs_dm *dm, struct ibv_command_buffer *link)
{
	return no_kernel();
}

int ibv_cmd_free_dm(struct verbs_dm *dm)
{
	return no_kernel();
}

int ibv_cmd_reg_dm_mr(struct ibv_pd *pd, struct verbs_dm *dm,
		      uint64_t offset, size_t length, unsigned int access,
		      struct verbs_mr *vmr, struct ibv_command_buffer *link)
{
	return no_kernel();
}
