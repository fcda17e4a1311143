# srq_pingpong taken another way: deeper SRQs, the receives written with
# sge=, the pairs connected from B's side, the polls in pieces, B's CQ first.
# (No count= for the receives: it counts wr_ids up, and srq_pingpong tells a
# receive from a send by its wr_id, 1 or 2.)
lesson next
#! step 2
create_srq pd0 max_wr=40 max_sge=1
#! quiet
#! refused
create_srq pd1 max_wr=48
#! step 3
repeat 32 post_srq_recv srq1 sge=mr1:0:4096 wr_id=1
#! quiet
repeat 32 post_srq_recv srq0 sge=mr0:0:0x1000 wr_id=1
#! step 4
repeat 16 create_qp pd0 type=IBV_QPT_RC send_cq=cq0 recv_cq=cq0 srq=srq0 max_send_wr=2
repeat 16 create_qp pd1 type=IBV_QPT_RC send_cq=cq1 recv_cq=cq1 srq=srq1 max_send_wr=1 max_recv_wr=1
#! step 5
pp_dest qp16 gid_index=1 psn=7
# Another slot than the step's: a look on the wrong QP.
pp_dest qp3 gid_index=1
#! quiet
#! refused
pp_dest qp0 gid_index=1
#! step 6
# A wrong turn that fails: no such access flag.
repeat 16 connect qp{i} qp{i+16} access=bogus
#! hint
repeat 16 connect qp{i+16} qp{i} access=0
#! step 7
repeat 16 send qp{i} sge=mr0:0:4096 wr_id=2
#! step 8
# In two pieces. (After the first the tutor says the goal is out of reach,
# which it is not: see the report.)
poll cq1 n=8
#! refused
poll cq1 n=8
#! step 9
repeat 16 send qp{i+16} mr=mr1 wr_id=2
# B's CQ first, A's in two pieces. (The tutor says the goal is out of reach
# on the way, as it does after the lesson's own post_send: see the report.)
poll cq1 n=16
poll cq0 n=20
poll cq0 n=20
#! step 10
repeat 16 post_srq_recv srq1 sge=mr1:0:4096 wr_id=1
#! quiet
repeat 16 post_srq_recv srq0 mr=mr0 length=4k wr_id=1
#! step 11
lesson next
#! step 12
# The wrong SRQ: it fails the same way, but the step asks about B's. (The
# tutor says nothing: see the report.)
destroy_srq srq0
#! refused
destroy_srq srq1
#! step 13
lesson next
