/* The C side of the simulator's libibverbs: the objects a program holds. */
#ifndef VSH_SHIM_H
#define VSH_SHIM_H

#include <infiniband/verbs.h>
#include <stdint.h>

/*
 * Each object a program gets is the header's struct followed by the Go
 * side's handle, so that a cast of the program's pointer finds it. The
 * context is a struct verbs_context (the ibv_context last) after its handle.
 */
struct vsh_device {
	struct ibv_device dev;
	uintptr_t h;
};

struct vsh_context {
	uintptr_t h;
	struct verbs_context vctx;
};

struct vsh_pd {
	struct ibv_pd pd;
	uintptr_t h;
};

struct vsh_mr {
	struct ibv_mr mr;
	uintptr_t h;
};

struct vsh_cq {
	struct ibv_cq cq;
	uintptr_t h;
};

struct vsh_qp {
	struct ibv_qp qp;
	uintptr_t h;
};

struct vsh_srq {
	struct ibv_srq srq;
	uintptr_t h;
};

struct vsh_ah {
	struct ibv_ah ah;
	uintptr_t h;
};

struct vsh_channel {
	struct ibv_comp_channel ch;
	uintptr_t h;
};

struct vsh_xrcd {
	struct ibv_xrcd xrcd;
	uintptr_t h;
};

/*
 * vsh_swr is one send work request flattened by the C side, which reads
 * the header's unions; the Go side reads only this.
 */
struct vsh_swr {
	uint64_t wr_id;
	uint32_t sge;	/* its first SGE in the batch's copy of the SGEs */
	int num_sge;
	uint32_t opcode;
	uint32_t send_flags;
	uint32_t imm;	/* host order */
	uint64_t remote_addr;
	uint32_t rkey;
	uint64_t compare_add;
	uint64_t swap;
	uintptr_t ah;	/* the AH's handle, 0 for none */
	uint32_t remote_qpn;
	uint32_t remote_qkey;
	uint32_t remote_srqn;
};

/* vsh_rwr is one receive work request. */
struct vsh_rwr {
	uint64_t wr_id;
	uint32_t sge;
	int num_sge;
};

/*
 * The C side copies a work request list and its SGEs (reading the
 * program's pointers, so that a bad one faults here, as in rdma-core) and
 * hands over up to VSH_CHUNK requests in one call; a request with more
 * than VSH_MAX_SGE SGEs, or fewer than 0, ends the copy.
 */
#define VSH_CHUNK 1024
#define VSH_MAX_SGE 64

struct vsh_context *vsh_new_context(struct ibv_device *dev, uintptr_t h, int async_fd, int comp_vectors);
void vsh_null(const char *verb, const char *arg, const char *fix);

#endif
