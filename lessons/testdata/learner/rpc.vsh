# rpc taken another way: receives posted with do and sge=, requests
# written in two stores with hex values, the descriptor's address and rkey
# typed as read from the dump (the simulator's, seed 1), aliases, polls in
# another order, advance instead of poll wait=.
lesson next
#! step 2
# Four slots as four SGEs of one receive: qp1 takes one SGE a WR (EINVAL),
# and the tutor hints.
recv qp1 sge=mr2:0:64,mr2:64:64,mr2:128:64,mr2:192:64 wr_id=0
#! hint
do recv qp1 sge=mr2:0:64 wr_id=0; recv qp1 sge=mr2:64:64 wr_id=1; recv qp1 sge=mr2:128:64 wr_id=2; recv qp1 sge=mr2:192:64 wr_id=3
#! step 3
lesson next
#! step 4
fill mr1 'hello, server'
#! quiet
store mr0 u32=0x2 u32=0x1
#! quiet
store mr0 offset=8 u64=mr1.addr u32=mr1.rkey u32=0xd
recv qp0 sge=mr0:0:0 wr_id=101
send qp0 sge=mr0:0:24 wr_id=1
poll cq0
#! step 5
mem mr2 0 32
#! refused
#! quiet
poll cq2 n=4
#! step 6
# The descriptor as the dump shows it: addr 0x555530ce1000, rkey 0x25f.
send qp1 opcode=IBV_WR_RDMA_READ sge=mr3:0:13 remote_addr=0x555530ce1000 rkey=0x25f wr_id=1001
poll cq2
#! step 7
recv qp1 sge=mr2:0:64 wr_id=0
send qp1 opcode=IBV_WR_RDMA_WRITE_WITH_IMM sge=mr3:0:0 remote_addr=mr1 rkey=mr1 imm=0x1 wr_id=1002
poll cq1
poll cq2
#! step 8
store mr0 offset=64 u32=1 u32=2
store mr0 offset=72 u64=mr1.addr+0x800 u32=mr1.rkey u32=13
recv qp0 sge=mr0:0:0 wr_id=102
send qp0 sge=mr0:64:24 wr_id=2
poll cq0 n=1
#! step 9
poll cq2 n=1
recv qp1 sge=mr2:64:64 wr_id=1
send qp1 opcode=rdma_write_with_imm sge=mr3:0:13 remote=mr1+2048 imm=2 wr_id=1003
poll cq1
poll cq2
mem mr2 64 32
#! step 10
lesson next
#! step 11
#! predict 4
repeat 5 recv qp0 sge=mr0:0:0 wr_id={i+103}
do send qp0 sge=mr0:128:24 wr_id=3; send qp0 sge=mr0:160:24 wr_id=4; send qp0 sge=mr0:192:24 wr_id=5; send qp0 sge=mr0:224:24 wr_id=6; send qp0 sge=mr0:256:24 wr_id=7
advance 50ms
poll cq0
#! step 12
poll cq2
recv qp1 sge=mr2:128:64 wr_id=2
send qp1 opcode=rdma_write_with_imm sge=mr3:0:13 remote=mr1+1024 imm=3 wr_id=1004
advance 20ms
poll cq1
poll cq2
poll cq0
#! step 13
lesson next
#! step 14
lesson next
#! step 15
mqp qp2 state=rts sq_psn=0 timeout=14 retry_cnt=7 rnr_retry=0 max_rd_atomic=1
repeat 3 recv qp2 sge=mr0:0:0 wr_id={i+201}
repeat 3 send qp2 sge=mr0:64:24 wr_id={i+21}
poll cq2
poll cq1
poll cq0
#! step 16
#! predict IBV_WC_REM_INV_REQ_ERR
send qp0 opcode=IBV_WR_RDMA_WRITE sge=mr1:0:13 remote_addr=mr3 rkey=mr3 wr_id=99
poll cq0
#! step 17
