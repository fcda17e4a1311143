# qp-types with the other forms of post_send: remote_addr= and rkey=,
# sge=, IBV_WR_ names, other offsets, other orders.
lesson next
lesson next
#! step 3
fill mr0 "over RC"
post_recv qp1 mr=mr1 offset=64 length=64 wr_id=100
send qp0 mr=mr0 length=7 wr_id=9
poll_cq cq1
poll_cq cq0
send qp0 opcode=IBV_WR_RDMA_WRITE mr=mr0 len=7 remote_addr=mr1+100 rkey=mr1
poll cq0 n=4
fill mr1 "from B, for A" offset=200
send qp0 opcode=rdma_read sge=mr0:200:6 remote_addr=mr1+200 rkey=mr1
poll cq0
send qp0 opcode=IBV_WR_ATOMIC_FETCH_AND_ADD mr=mr0 offset=512 remote_addr=mr1+512 rkey=mr1 add=5
poll cq0
send qp0 opcode=rdma_write sge=mr0:0:65536 remote=mr1
poll cq0
#! step 8
lesson next
post_recv qp3 mr=mr1 offset=4096
send qp2 mr=mr0 len=100 wr_id=1
send qp2 opcode=rdma_write mr=mr0 len=100 remote=mr1+5000 wr_id=2
poll cq1
poll cq0
#! step 10
send qp2 opcode=rdma_read mr=mr9 length=16 remote=mr1
#! hint
send qp2 opcode=IBV_WR_RDMA_READ mr=mr0 len=8 remote=mr1+8
poll cq0
# Another write, flushed like the lesson's send.
send qp2 opcode=rdma_write mr=mr0 len=8 remote=mr1
poll cq0
lesson next
post_recv qp5 mr=mr1 offset=4096 length=2000
send qp4 mr=mr0 offset=8 length=1024 ah=ah0 remote_qpn=qp5
poll cq1
poll cq0
post_recv qp5 mr=mr1 offset=16384 length=8192
send qp4 mr=mr0 length=4096 ah=ah0 remote_qpn=qp5
poll cq1
poll cq0
send qp4 opcode=rdma_read mr=mr0 length=8 ah=ah0 remote_qpn=qp5 remote=mr1
poll cq0
