# write-imm taken another way: aliases, SGEs spelled out, the remote
# address and rkey given apart, the fill in two pieces, other wr_ids, imm in
# decimal, a WRITE to a wrong handle, and advance instead of poll wait=.
lesson next
#! step 2
recv qp1 sge=mr1:2048:64 wr_id=100
#! quiet
#! refused
# The fill in two pieces. (After the first the tutor says "not yet" about the
# bytes still to write: see the report.)
fill mr0 "payload!"
fill mr0 "done" offset=8
# A WRITE to an MR that does not exist: refused before it is posted.
send qp0 opcode=IBV_WR_RDMA_WRITE sge=mr0:0:8 remote=mr9 flags=0
#! hint
send qp0 opcode=IBV_WR_RDMA_WRITE sge=mr0:0:8 remote_addr=mr1 rkey=mr1 flags=0
send qp0 opcode=IBV_WR_SEND sge=mr0:8:4 wr_id=101
poll cq1
poll cq0
#! step 3
#! predict 8
recv qp1 sge=mr1:0:0 wr_id=200
#! quiet
send qp0 opcode=IBV_WR_RDMA_WRITE_WITH_IMM sge=mr0:0:8 remote_addr=mr1+256 rkey=mr1 imm=4660
poll cq1
poll cq0
#! step 4
#! predict 0
fill mr0 "second!!" length=8
send qp0 opcode=IBV_WR_RDMA_WRITE_WITH_IMM sge=mr0:0:8 remote_addr=mr1+512 rkey=mr1 imm=2
poll cq0
#! step 5
# The step's goal was reached before its empty poll, which lands here. (The
# tutor then says the goal is out of reach, which it is not: see the report.)
poll cq0 n=1
recv qp1 sge=mr1:0:0 wr_id=300
advance 20ms
poll cq0
poll cq1
#! step 6
recv qp1 sge=mr1:0:0 wr_id=400
#! quiet
#! refused
send qp0 opcode=IBV_WR_RDMA_WRITE_WITH_IMM sge=mr0:0:0 remote_addr=mr1 rkey=mr1 imm=48879
poll cq1
#! step 7
