# wire taken another way: the fabric stopped before the trace starts,
# aliases and SGEs spelled out, step N instead of run, another duration,
# a wrong fault rule cleared and the right one written in capitals.
lesson next
#! step 2
fabric step
trace on
#! step 3
fill mr0 "first" length=5
fill mr0 "last!" offset=4091 length=5
recv qp1 sge=mr1:0:4096 wr_id=10
send qp0 sge=mr0:0:4096 wr_id=11
#! step 4
#! predict 0x0000000000
step 1
#! step 5
step 4
poll cq1
poll cq0
#! step 6
#! predict 0
# A SEND from an MR that does not exist: refused before it is posted.
send qp0 sge=mr9:4091:5
#! hint
send qp0 sge=mr0:4091:5 wr_id=20
run
poll cq0
#! step 7
recv qp1 sge=mr1:4096:64 wr_id=21
advance 10ms
poll cq1
poll cq0
#! step 8
send qp0 opcode=IBV_WR_RDMA_READ sge=mr0:4096:3000 remote_addr=mr1 rkey=mr1 wr_id=30
step 4
poll cq0
#! step 9
# A wrong rule first, the FIRST packet: a setting, taken back before any
# packet moves.
fault drop opcode=send_first count=1
#! refused
#! hint
fault clear
fault drop opcode=SEND_MIDDLE nth=1
fill mr0 "gobackn" offset=1024 length=7
recv qp1 sge=mr1:0:4096 wr_id=40
send qp0 sge=mr0:0:4096 wr_id=41
run
poll cq1
poll cq0
#! step 10
lesson next
#! step 11
fabric auto
trace off
#! step 12
