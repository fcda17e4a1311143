# qp-types with the other forms of post_send: remote_addr= and rkey=,
# sge=, IBV_WR_ names, aliases, count=, other wr_ids, other orders.
lesson next
lesson next
#! step 3
# The fill first, then B's receive, as an sge= with the length written out.
fill mr0 "over RC"
recv qp1 sge=mr1:0:4096 wr_id=100
#! quiet
#! refused
send qp0 mr=mr0 length=7 wr_id=9
# B's CQ first.
poll_cq cq1
poll_cq cq0
#! step 4
# A wrong turn that fails: no such MR.
send qp0 opcode=IBV_WR_RDMA_WRITE mr=mr7 len=7 remote_addr=mr1+100 rkey=mr1
#! hint
send qp0 opcode=IBV_WR_RDMA_WRITE mr=mr0 len=7 remote_addr=mr1+100 rkey=mr1
# B's CQ stays empty: polling it is on the way.
poll cq1 n=1
#! quiet
poll cq0 n=4
#! step 5
fill mr1 "from B" offset=200
#! quiet
send qp0 opcode=rdma_read sge=mr0:200:6 remote_addr=mr1+0xc8 rkey=mr1
poll cq0
#! step 6
send qp0 opcode=IBV_WR_ATOMIC_FETCH_AND_ADD sge=mr0:512:8 remote_addr=mr1+512 rkey=mr1 add=5
mem mr1 512 8
#! quiet
poll cq0
#! step 7
send qp0 opcode=rdma_write sge=mr0:0:65536 remote=mr1
poll cq0
#! step 8
lesson next
#! step 9
recv qp3 sge=mr1:0:0x1000
send qp2 mr=mr0 len=16 wr_id=1
send qp2 opcode=IBV_WR_RDMA_WRITE mr=mr0 len=16 remote_addr=mr1+1000 rkey=mr1 wr_id=2
poll cq1
poll cq0
#! step 10
send qp2 opcode=IBV_WR_RDMA_READ sge=mr0:0:16 remote_addr=mr1 rkey=mr1
poll cq0
#! step 11
# Another send, flushed.
send qp2 sge=mr0:0:16 wr_id=77
poll cq0 n=1
#! step 12
lesson next
#! step 13
recv qp5 sge=mr1:2048:1064
send qp4 mr=mr0 len=1024 ah=ah0 remote_qpn=qp5 remote_qkey=286331153
poll cq1
poll cq0
#! step 14
post_recv qp5 mr=mr1 offset=0x2000 length=4136
send qp4 mr=mr0 length=2048 ah=ah0 remote_qpn=qp5
poll cq1
poll cq0
#! step 15
send qp4 opcode=IBV_WR_RDMA_WRITE sge=mr0:0:8 ah=ah0 remote_qpn=qp5 remote_addr=mr1 rkey=mr1
poll cq0
