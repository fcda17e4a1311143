# layouts taken another way: a CQ too small at first and resized, the
# chunks posted in chunk order (so B's engine 0 sees 0, 2, 4, 6; each QP
# still sends its two chunks in the lesson's order), a wrong bitmap first,
# libibverbs names and SGEs, the engines polled in another order, the UD
# chunks sent by hand, the group attached in reverse, the IP group joined
# by context and IPv4 address after a join that fails.
lesson next
#! step 2
# 2 × (8 + 8) is 32, not 16: the device rounds 16 up to 31, still short.
create_cq ctx0 cqe=16
#! hint
resize_cq cq0 cqe=32
#! quiet
create_cq ctx0 cqe=40
create_cq ctx1 cqe=32
create_cq ctx1 cqe=64
#! step 3
lesson next
#! step 4
lesson next
#! step 5
lesson next
#! step 6
repeat 4 send qp{i} opcode=IBV_WR_RDMA_WRITE_WITH_IMM sge=mr0:{i*512}:512 remote_addr=mr1+{i*512} rkey=mr1 imm={i}
repeat 4 send qp{i} opcode=IBV_WR_RDMA_WRITE_WITH_IMM sge=mr0:{i*512+2048}:512 remote_addr=mr1+{i*512+2048} rkey=mr1 imm={i+4}
poll cq1 n=4 wait=1s
poll cq0 n=4 wait=1s
#! step 7
poll cq2 n=4 wait=1s
# chunks 0, 2, 4, 6 are not the low four bits
fill mr2 0x0f length=1
#! hint
fill mr2 0x55 length=1
mem mr2 0 8
#! step 8
poll cq3 wait=1s
fill mr2 0xff length=1
mem mr1 3584 32
#! step 9
lesson next
#! step 10
repeat 4 send qp{i+8} opcode=IBV_WR_RDMA_WRITE_WITH_IMM sge=mr0:{i*512}:512 remote=mr1+{i*512} imm={i}
repeat 4 send qp{i+8} opcode=IBV_WR_RDMA_WRITE_WITH_IMM sge=mr0:{i*512+2048}:512 remote=mr1+{i*512+2048} imm={i+4}
poll cq0 n=8 wait=1s
poll cq1 n=8 wait=1s
#! step 11
poll cq3 wait=1s
poll cq2 wait=1s
mem mr2 0 1
fill mr2 0x77 length=1
mem mr1 1536 64
#! step 12
recv qp15 sge=mr1:0:0 count=2
send qp11 opcode=IBV_WR_RDMA_WRITE_WITH_IMM sge=mr0:1536:512 remote=mr1+1536 imm=3
send qp11 opcode=IBV_WR_RDMA_WRITE_WITH_IMM sge=mr0:3584:512 remote=mr1+3584 imm=7
poll cq3 n=2 wait=1s
poll cq1 n=2 wait=1s
fill mr2 0xff length=1
#! step 13
lesson next
#! step 14
send qp16 opcode=IBV_WR_RDMA_WRITE sge=mr0:0:512 remote_addr=mr1 rkey=mr1 ah=ah0 remote_qpn=qp17
poll cq0 wait=1s
#! step 15
lesson next
#! step 16
send qp16 opcode=IBV_WR_SEND_WITH_IMM sge=mr0:0:1024 imm=0 ah=ah0 remote_qpn=qp17
send qp16 opcode=IBV_WR_SEND_WITH_IMM sge=mr0:1024:1024 imm=1 ah=ah0 remote_qpn=qp18
send qp16 opcode=IBV_WR_SEND_WITH_IMM sge=mr0:0x800:0x400 imm=2 ah=ah0 remote_qpn=qp17
send qp16 opcode=IBV_WR_SEND_WITH_IMM sge=mr0:3072:1024 imm=3 ah=ah0 remote_qpn=qp18
poll cq3 n=2 wait=1s
poll cq2 n=2 wait=1s
poll cq0 n=4 wait=1s
#! step 17
# a unicast GID is no group
attach_mcast qp18 gid=fe80::1
#! hint
attach_mcast qp18 dgid=ff02::1
#! quiet
attach_mcast qp17 dgid=ff02::1
attach_mcast qp16 dgid=ff02::1
#! step 18
lesson next
#! step 19
send qp16 sge=mr0:0:13 ah=ah1 remote_qpn=0xffffff remote_qkey=0x11111111
poll cq3 n=1 wait=1s
poll cq2 n=1 wait=1s
poll cq0 n=2 wait=1s
mem mr3 0 128
#! step 20
lesson next
#! step 21
detach_mcast qp18 dgid=ff02::1
send qp16 sge=mr0:0:13 ah=ah1 remote_qpn=0xffffff
poll cq0 n=2 wait=1s
poll cq2 wait=1s
poll cq3 wait=1s
#! step 22
lesson next
#! step 23
attach_mcast qp18 dgid=::ffff:239.1.1.1
send qp16 sge=mr0:0:13 ah=ah2 remote_qpn=0xffffff
poll cq3 n=1 wait=1s
poll cq0 wait=1s
#! step 24
# B's own GID is no group: the IP stack refuses it (EINVAL).
join_group B gid=B
#! refused
join_group ctx1 dgid=239.1.1.1
send qp16 sge=mr0:0:13 ah=ah2 remote_qpn=0xffffff
poll cq3 n=1 wait=1s
poll cq0 n=1 wait=1s
#! step 25
