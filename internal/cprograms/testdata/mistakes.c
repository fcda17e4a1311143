/*
 * mistakes.c: the classic verbs mistakes, made one after the other on one
 * device with two RC QPs connected to each other through GID index 1 (the
 * port's RoCEv2 GID), each checked for the failure it must give:
 *
 *   1. INIT -> RTR without the address vector (IBV_QP_AV): EINVAL
 *   2. ibv_post_send before RTS: EINVAL
 *   3. (connect properly: RESET -> INIT -> RTR -> RTS, both QPs)
 *   4. a receive buffer smaller than the message: both sides fail
 *   5. an RDMA WRITE with a bad rkey: IBV_WC_REM_ACCESS_ERR
 *
 * One line per step with the errno or completion status; exit status 0
 * when every mistake failed as expected, 1 when one did not, 2 when the
 * setup itself failed. For step 4 the IB spec (and mlx5) give the receiver
 * IBV_WC_LOC_LEN_ERR and the sender IBV_WC_REM_INV_REQ_ERR; kernel rxe
 * gives IBV_WC_LOC_QP_OP_ERR and IBV_WC_REM_OP_ERR (copy_data returns
 * -EINVAL, which send_data_in takes for a malformed WQE), so either pair
 * is accepted here.
 *
 *   gcc -O0 -o mistakes mistakes.c -libverbs
 *   vsh run --trace=trace.txt -- ./mistakes [DEVICE]    (default sim0)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#define BUF_SIZE 4096
#define PORT 1
#define GID_INDEX 1

static int failures;

static void die(const char *what, int err)
{
	fprintf(stderr, "mistakes: %s failed: %s (%s)\n", what,
		strerrorname_np(err) ? strerrorname_np(err) : "?", strerror(err));
	exit(2);
}

/* result turns a verb's return value into an errno: rdma-core returns it
 * (or -1 with errno set). */
static int result(int ret)
{
	if (ret < 0)
		return errno;
	return ret;
}

static const char *errname(int err)
{
	const char *n = strerrorname_np(err);
	return n ? n : "unknown errno";
}

static const char *status_name(enum ibv_wc_status s)
{
	switch (s) {
	case IBV_WC_SUCCESS: return "IBV_WC_SUCCESS";
	case IBV_WC_LOC_LEN_ERR: return "IBV_WC_LOC_LEN_ERR";
	case IBV_WC_LOC_QP_OP_ERR: return "IBV_WC_LOC_QP_OP_ERR";
	case IBV_WC_LOC_PROT_ERR: return "IBV_WC_LOC_PROT_ERR";
	case IBV_WC_WR_FLUSH_ERR: return "IBV_WC_WR_FLUSH_ERR";
	case IBV_WC_REM_INV_REQ_ERR: return "IBV_WC_REM_INV_REQ_ERR";
	case IBV_WC_REM_ACCESS_ERR: return "IBV_WC_REM_ACCESS_ERR";
	case IBV_WC_REM_OP_ERR: return "IBV_WC_REM_OP_ERR";
	case IBV_WC_RETRY_EXC_ERR: return "IBV_WC_RETRY_EXC_ERR";
	case IBV_WC_RNR_RETRY_EXC_ERR: return "IBV_WC_RNR_RETRY_EXC_ERR";
	default: return "another status";
	}
}

/* expect_errno prints step's line and counts a wrong errno. */
static void expect_errno(int step, const char *what, int got, int want)
{
	printf("%d %s: %s", step, what, got ? errname(got) : "0 (it worked)");
	if (got == want) {
		printf(" (expected)\n");
		return;
	}
	printf(" -- expected %s\n", errname(want));
	failures++;
}

/* poll_one waits up to 5 s for one completion on cq. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	struct timespec pause = { 0, 1000000 };
	int i;

	for (i = 0; i < 5000; i++) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			die("ibv_poll_cq", EIO);
		if (n == 1)
			return 1;
		nanosleep(&pause, NULL);
	}
	return 0;
}

/* expect_wc polls cq for one completion and checks its status is one of
 * want[0..n); it prints "who STATUS (text)" and returns 1 when it is. */
static int expect_wc(struct ibv_cq *cq, const char *who,
		     const enum ibv_wc_status *want, int n)
{
	struct ibv_wc wc;
	int i;

	if (!poll_one(cq, &wc)) {
		printf("%s: no completion within 5 s", who);
		return 0;
	}
	printf("%s %s (%s)", who, status_name(wc.status),
	       ibv_wc_status_str(wc.status));
	for (i = 0; i < n; i++)
		if (wc.status == want[i])
			return 1;
	return 0;
}

static void drain(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	while (ibv_poll_cq(cq, 1, &wc) > 0)
		;
}

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = PORT,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	return result(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
}

static int to_reset(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	return result(ibv_modify_qp(qp, &a, IBV_QP_STATE));
}

/* to_rtr moves qp to RTR towards dest_qpn; with_av false leaves out the
 * address vector, the mistake of step 1. */
static int to_rtr(struct ibv_qp *qp, uint32_t dest_qpn, const union ibv_gid *gid,
		  int with_av)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = dest_qpn,
		.rq_psn = 0,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.grh = { .dgid = *gid, .sgid_index = GID_INDEX, .hop_limit = 1 },
			.port_num = PORT,
		},
	};
	int mask = IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;

	if (with_av)
		mask |= IBV_QP_AV;
	return result(ibv_modify_qp(qp, &a, mask));
}

static int to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.sq_psn = 0,
		.max_rd_atomic = 1,
	};

	return result(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
				    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC));
}

/* connect_pair takes both QPs from wherever they are to RTS, each towards
 * the other: through RESET, which also empties their queues. */
static void connect_pair(struct ibv_qp *q[2], const union ibv_gid *gid)
{
	int i, err;

	for (i = 0; i < 2; i++) {
		if ((err = to_reset(q[i])) || (err = to_init(q[i])))
			die("ibv_modify_qp to RESET and INIT", err);
	}
	for (i = 0; i < 2; i++) {
		if ((err = to_rtr(q[i], q[1 - i]->qp_num, gid, 1)))
			die("ibv_modify_qp to RTR", err);
		if ((err = to_rts(q[i])))
			die("ibv_modify_qp to RTS", err);
	}
}

/* post_send posts one signaled WR; its wr_id is the step's number. */
static int post_send(struct ibv_qp *qp, uint64_t wr_id, struct ibv_mr *mr, uint32_t len,
		     enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)mr->addr, .length = len, .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;

	return result(ibv_post_send(qp, &wr, &bad));
}

/* post_recv posts a receive of len bytes, wr_id 4 (step 4's). */
static int post_recv(struct ibv_qp *qp, struct ibv_mr *mr, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)mr->addr + BUF_SIZE / 2, .length = len, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 4, .sg_list = &sge, .num_sge = 1 }, *bad;

	return result(ibv_post_recv(qp, &wr, &bad));
}

/* short_receive is step 4: a 64-byte SEND into a 16-byte receive buffer. */
static void short_receive(struct ibv_qp *q[2], struct ibv_cq *cq[2], struct ibv_mr *mr)
{
	static const enum ibv_wc_status recv_ok[] = { IBV_WC_LOC_LEN_ERR, IBV_WC_LOC_QP_OP_ERR };
	static const enum ibv_wc_status send_ok[] = { IBV_WC_REM_INV_REQ_ERR, IBV_WC_REM_OP_ERR };
	int err, ok;

	if ((err = post_recv(q[1], mr, 16)))
		die("ibv_post_recv", err);
	if ((err = post_send(q[0], 4, mr, 64, IBV_WR_SEND, 0, 0)))
		die("ibv_post_send", err);
	printf("4 a 64-byte SEND into a 16-byte receive buffer: ");
	ok = expect_wc(cq[1], "receiver", recv_ok, 2);
	printf(", ");
	ok &= expect_wc(cq[0], "sender", send_ok, 2);
	if (ok) {
		printf(" (expected)\n");
		return;
	}
	printf(" -- expected the receiver IBV_WC_LOC_LEN_ERR or IBV_WC_LOC_QP_OP_ERR, the sender IBV_WC_REM_INV_REQ_ERR or IBV_WC_REM_OP_ERR\n");
	failures++;
}

/* bad_rkey is step 5: an RDMA WRITE into the peer's buffer with an rkey
 * that is not the buffer's. */
static void bad_rkey(struct ibv_qp *q[2], struct ibv_cq *cq[2], struct ibv_mr *mr)
{
	static const enum ibv_wc_status want[] = { IBV_WC_REM_ACCESS_ERR };
	int err;

	if ((err = post_send(q[0], 5, mr, 64, IBV_WR_RDMA_WRITE,
			     (uintptr_t)mr->addr + BUF_SIZE / 2, mr->rkey ^ 0xff00)))
		die("ibv_post_send", err);
	printf("5 an RDMA WRITE with a bad rkey: ");
	if (expect_wc(cq[0], "sender", want, 1)) {
		printf(" (expected)\n");
		return;
	}
	printf(" -- expected IBV_WC_REM_ACCESS_ERR\n");
	failures++;
}

static struct ibv_context *open_named(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		die("ibv_get_device_list", errno);
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "mistakes: cannot open device %s\n", name);
		exit(2);
	}
	return ctx;
}

int main(int argc, char *argv[])
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	void *buf = NULL;
	struct ibv_mr *mr;
	struct ibv_cq *cq[2];
	struct ibv_qp *q[2];
	union ibv_gid gid;
	int i, err;

	setvbuf(stdout, NULL, _IOLBF, 0); /* each line out at once, even if killed */
	ctx = open_named(argc > 1 ? argv[1] : "sim0");
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd", errno);
	if ((err = posix_memalign(&buf, BUF_SIZE, BUF_SIZE)))
		die("posix_memalign", err);
	memset(buf, 0x5a, BUF_SIZE);
	mr = ibv_reg_mr(pd, buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		die("ibv_reg_mr", errno);
	if ((err = result(ibv_query_gid(ctx, PORT, GID_INDEX, &gid))))
		die("ibv_query_gid", err);
	for (i = 0; i < 2; i++) {
		struct ibv_qp_init_attr init = {
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		};

		if (!(cq[i] = ibv_create_cq(ctx, 8, NULL, NULL, 0)))
			die("ibv_create_cq", errno);
		init.send_cq = init.recv_cq = cq[i];
		if (!(q[i] = ibv_create_qp(pd, &init)))
			die("ibv_create_qp", errno);
		if ((err = to_init(q[i])))
			die("ibv_modify_qp to INIT", err);
	}

	expect_errno(1, "ibv_modify_qp INIT->RTR without IBV_QP_AV",
		     to_rtr(q[0], q[1]->qp_num, &gid, 0), EINVAL);
	expect_errno(2, "ibv_post_send in INIT, before RTS",
		     post_send(q[0], 2, mr, 64, IBV_WR_SEND, 0, 0), EINVAL);
	/* rdma-core's rxe has queued the refused WR all the same: connecting
	 * goes through RESET, which empties the queue. */
	connect_pair(q, &gid);
	printf("3 connect qp 0x%06x and qp 0x%06x through GID %d: ok\n",
	       q[0]->qp_num, q[1]->qp_num, GID_INDEX);
	short_receive(q, cq, mr);

	/* Both QPs are in ERROR now: connect them again. */
	drain(cq[0]);
	drain(cq[1]);
	connect_pair(q, &gid);
	bad_rkey(q, cq, mr);

	for (i = 0; i < 2; i++) {
		ibv_destroy_qp(q[i]);
		ibv_destroy_cq(cq[i]);
	}
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	if (failures) {
		printf("%d mistake(s) did not fail as expected\n", failures);
		return 1;
	}
	printf("every mistake failed as expected\n");
	return 0;
}
