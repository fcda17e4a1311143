# write-read taken another way: aliases, libibverbs flag names, the remote
# address spelled out, sge= for mr=, B's buffer registered again after a
# mistake (so it is mr2 here, paired with the lesson's mr1).
lesson next
#! step 2
# Remote write without local write: ibv_reg_mr refuses it (EINVAL).
reg pd0 len=4096 access=remote_write
#! hint
reg pd0 len=4k access=IBV_ACCESS_LOCAL_WRITE
#! quiet
# A wrong turn that succeeds: B's buffer without remote read.
reg pd1 len=4k access=IBV_ACCESS_LOCAL_WRITE|IBV_ACCESS_REMOTE_WRITE
#! hint
dereg mr1
#! refused
reg pd1 len=0x1000 access=IBV_ACCESS_LOCAL_WRITE|IBV_ACCESS_REMOTE_WRITE|IBV_ACCESS_REMOTE_READ
#! step 3
lesson next
#! step 4
show mr2
#! quiet
recv qp0 sge=mr0:0:64 wr_id=7
store mr2 u64=mr2.addr u32=mr2.rkey u32=0x1000
send qp1 sge=mr2:0:16 wr_id=8
poll cq0
poll cq1
#! step 5
fill mr0 "hello, B"
send qp0 opcode=IBV_WR_RDMA_WRITE sge=mr0:0:8 remote_addr=mr2 rkey=mr2
poll cq1
#! quiet
poll cq0
#! step 6
send qp0 opcode=IBV_WR_RDMA_READ sge=mr0:100:8 remote_addr=mr2 rkey=mr2
poll cq1
poll cq0 n=1
#! step 7
fill mr2 0x5a length=4096
send qp0 opcode=IBV_WR_RDMA_READ sge=mr0:0:4096 remote=mr2+0
poll cq0 wait=1s
#! step 8
