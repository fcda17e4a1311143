# srq_pingpong taken another way: deeper SRQs, receives posted in one call,
# the pairs connected from B's side, the polls in pieces.
lesson next
create_srq pd0 max_wr=40 max_sge=1
create_srq pd1 max_wr=48
post_srq_recv srq0 mr=mr0 wr_id=1 count=32
post_srq_recv srq1 sge=mr1:0:4096 wr_id=1 count=32
#! step 4
repeat 16 create_qp pd0 type=IBV_QPT_RC send_cq=cq0 recv_cq=cq0 srq=srq0 max_send_wr=2
repeat 16 create_qp pd1 type=IBV_QPT_RC send_cq=cq1 recv_cq=cq1 srq=srq1 max_send_wr=1 max_recv_wr=1
pp_dest qp16 gid_index=1 psn=7
pp_dest qp3 gid_index=1
#! step 6
repeat 16 connect qp{i} qp{i+16} access=bogus
#! hint
repeat 16 connect qp{i+16} qp{i} access=0
repeat 16 send qp{i} mr=mr0 wr_id=2
poll cq1 n=8
poll cq1 n=8
repeat 16 send qp{i+16} mr=mr1 wr_id=2
poll cq1 n=16
poll cq0 n=20
poll cq0 n=20
#! step 10
post_srq_recv srq1 mr=mr1 wr_id=1 count=16
post_srq_recv srq0 mr=mr0 wr_id=1 count=16
lesson next
destroy_srq srq0
lesson next
